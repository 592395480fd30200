#!/usr/bin/env bash
# Measures the reset of each enterprise application between episodes (a
# fresh copy of its pristine data, started and answering), as an episode
# waits for it: between episodes (the spare started during the last
# episode) and back to back (the reset waits for the spare to start).
# COUNT resets each (20 by default); medians and the slowest, in ms.
# Needs `proctor setup suites/enterprise` first.
# Usage: bench/services.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
count=${COUNT:-20}
go test ./service -run '^$' -bench 'EnterpriseReset' -benchtime "${count}x" -count 1 | awk '
/^BenchmarkEnterpriseReset/ {
	name = $1; sub(/^BenchmarkEnterpriseReset\//, "", name); sub(/-[0-9]+$/, "", name)
	for (i = 1; i <= NF; i++) { if ($i == "median-ms") med = $(i - 1); if ($i == "max-ms") mx = $(i - 1) }
	printf "%-32s median %10.3f ms   max %10.3f ms\n", name, med, mx
}'
