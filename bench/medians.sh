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
		u = $(i+1)
		if (u == "ns/op") ns[name] = ns[name] " " $i
		else if (u == "B/op") by[name] = $i
		else if (u == "allocs/op") al[name] = $i
		else if (u ~ /^[A-Za-z]/ && $i ~ /^[0-9.]+$/) {
			if (!((name, u) in ex)) units[name] = units[name] " " u
			ex[name, u] = ex[name, u] " " $i
		}
	}
	if (!(name in seen)) { order[++n] = name; seen[name] = 1 }
}
function median(s,   a, k, i, j, t) {
	k = split(s, a, " ")
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
END {
	printf "%-48s %14s %10s %10s  %s\n", "benchmark", "median ns/op", "B/op", "allocs/op", "other (median)"
	for (i = 1; i <= n; i++) {
		k = order[i]
		extra = ""
		m = split(units[k], us, " ")
		for (j = 1; j <= m; j++) extra = extra sprintf("%g %s  ", median(ex[k, us[j]]), us[j])
		printf "%-48s %14.0f %10s %10s  %s\n", k, median(ns[k]), by[k], al[k], extra
	}
}'
