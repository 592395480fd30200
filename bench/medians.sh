#!/usr/bin/env bash
# Runs the Go benchmarks COUNT times (default 5) and prints each one's
# median ns/op, B/op and allocs/op. Usage: bench/medians.sh [PACKAGES...]
cd "$(dirname "$0")/.."
. scripts/env.sh
count=${COUNT:-5}
pkgs=${*:-./...}
go test -run '^$' -bench . -benchmem -benchtime "${BENCHTIME:-300ms}" -count "$count" $pkgs |
awk '
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	for (i = 3; i < NF; i++) {
		if ($(i+1) == "ns/op") ns[name] = ns[name] " " $i
		if ($(i+1) == "B/op") by[name] = $i
		if ($(i+1) == "allocs/op") al[name] = $i
	}
	if (!(name in seen)) { order[++n] = name; seen[name] = 1 }
}
function median(s,   a, k, i, j, t) {
	k = split(s, a, " ")
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
END {
	printf "%-40s %14s %10s %10s\n", "benchmark", "median ns/op", "B/op", "allocs/op"
	for (i = 1; i <= n; i++) printf "%-40s %14.0f %10s %10s\n", order[i], median(ns[order[i]]), by[order[i]], al[order[i]]
}'
