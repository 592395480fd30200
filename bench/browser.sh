#!/usr/bin/env bash
# Compares the browser environment with Playwright driving the same
# Chromium on the same page (bench/playwright/page2000.html), in one run:
# the Go benchmarks of env/browser (COUNT times, medians) and
# bench/playwright/bench.mjs (medians of 20). Needs node and npm for
# playwright-core (installed here from the lock file).
# Usage: bench/browser.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
need_pkgs chromium:chromium node:nodejs npm:npm
count=${COUNT:-5}
go_out=$(go test ./env/browser -run '^$' -bench 'Observe|Reset' -benchtime 10x -count "$count")
(cd bench/playwright && npm ci --silent >/dev/null)
pw=$(cd bench/playwright && node bench.mjs 2>/dev/null)
echo "$go_out" | awk -v pw="$pw" '
function median(s,   a, k, i, j, t) {
	k = split(s, a, " ")
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
function pwget(k,   m) {
	if (match(pw, "\"" k "\":[0-9.]+")) { m = substr(pw, RSTART, RLENGTH); sub(/.*:/, "", m); return sprintf("%.0f", m) }
	return "-"
}
/^Benchmark/ { name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name); ns[name] = ns[name] " " $3 }
END {
	split("Observe/screenshot:screenshot Observe/tree:ax_snapshot Observe/observation:- Observe/click:click Reset/context:context_reset Reset/context-back-to-back:context_reset Reset/cold:cold_start", rows, " ")
	printf "%-32s %12s %14s\n", "measure (ms, medians)", "proctor", "playwright"
	for (i = 1; i in rows; i++) {
		split(rows[i], kv, ":")
		if (!(kv[1] in ns)) continue
		printf "%-32s %12.0f %14s\n", kv[1], median(ns[kv[1]]) / 1e6, (kv[2] == "-" ? "-" : pwget(kv[2]))
	}
}'
