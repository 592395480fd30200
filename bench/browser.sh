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
	n = split("Observe/screenshot:screenshot:screenshot|Observe/tree:ax_snapshot:tree, vs bare AX tree|Observe/tree:ax_layout:tree, vs AX tree + DOM snapshot|Observe/observation:observation:observation (+ marks), vs shot + AX + DOM|Observe/click:click:click round trip|Reset/context:context_reset:context reset, between episodes|Reset/context-back-to-back:context_reset:context reset, back to back|Reset/cold:cold_start:cold start", rows, "|")
	printf "%-44s %8s %11s\n", "measure (ms, medians)", "proctor", "playwright"
	for (i = 1; i <= n; i++) {
		split(rows[i], kv, ":")
		if (!(kv[1] in ns)) continue
		printf "%-44s %8.0f %11s\n", kv[3], median(ns[kv[1]]) / 1e6, pwget(kv[2])
	}
}'
