#!/usr/bin/env bash
# Compares the browser environment with Playwright driving the same
# Chromium on the same page (bench/playwright/page2000.html).
#
# The two take turns: ROUNDS rounds (default 4), each running the Go
# benchmarks of env/browser COUNT times (default 2, 10 iterations each)
# and bench/playwright/bench.mjs once (medians of PW_N, default 10), the
# order swapped every round, so that a change in the machine's load
# falls on both alike. A figure is the median of the rounds' figures:
# for Go, of every run's median (the benchmarks report it as ms-median);
# for Playwright, of every round's median.
# Needs node and npm for playwright-core (installed here from the lock
# file).
# Usage: bench/browser.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
need_pkgs chromium:chromium node:nodejs npm:npm
rounds=${ROUNDS:-4}
count=${COUNT:-2}
pw_n=${PW_N:-10}
(cd bench/playwright && npm ci --silent >/dev/null)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go test -c -o "$bin/browser.test" ./env/browser
go_out=""
pw_out=""
run_go() { go_out+=$'\n'$(cd env/browser && "$bin/browser.test" -test.run '^$' -test.bench 'Observe|Reset' -test.benchtime 10x -test.count "$count"); }
run_pw() { pw_out+=$'\n'$(cd bench/playwright && node bench.mjs --n "$pw_n" 2>/dev/null); }
for r in $(seq "$rounds"); do
	echo "round $r of $rounds" >&2
	if ((r % 2)); then run_go; run_pw; else run_pw; run_go; fi
done
{ echo "$go_out"; echo "$pw_out"; } | awk -v rounds="$rounds" '
function median(s,   a, k, i, j, t) {
	k = split(s, a, " ")
	if (k == 0) return ""
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
	v = $3 / 1e6 # the mean, where no median is reported
	for (i = 4; i < NF; i++) if ($(i + 1) == "ms-median") v = $i
	ns[name] = ns[name] " " v
}
/^\{/ {
	line = $0
	while (match(line, /"[a-z_]+":[0-9.]+/)) {
		pair = substr(line, RSTART + 1, RLENGTH - 1)
		line = substr(line, RSTART + RLENGTH)
		split(pair, p, "\":")
		pw[p[1]] = pw[p[1]] " " p[2]
	}
}
END {
	n = split("Observe/screenshot:screenshot:screenshot|Observe/tree:aria_snapshot_ai:tree, vs agent aria snapshot with boxes|Observe/tree:aria_snapshot:tree, vs aria snapshot (roles, names)|Observe/tree:ax_snapshot:tree, vs bare AX tree (CDP)|Observe/tree:ax_layout:tree, vs AX tree + DOM snapshot (CDP)|Observe/observation:observation:observation (+ marks), vs shot + AX + DOM|Observe/click:click:click round trip|Reset/context:context_reset:context reset, between episodes|Reset/context-back-to-back:context_reset:context reset, back to back|Reset/cold:cold_start:cold start", rows, "|")
	printf "%-48s %8s %11s\n", "measure (ms, medians of " rounds " rounds)", "proctor", "playwright"
	for (i = 1; i <= n; i++) {
		split(rows[i], row, ":")
		if (!(row[1] in ns)) continue
		w = median(pw[row[2]])
		printf "%-48s %8.0f %11s\n", row[3], median(ns[row[1]]), (w == "" ? "-" : sprintf("%.0f", w))
	}
}'
