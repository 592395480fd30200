#!/usr/bin/env bash
# Rollouts per hour through proctor serve, beside the same episodes through
# proctor run, on this machine: WORKERS concurrent rollouts (default 2) of
# light tasks with the gold policy for SECONDS (default 60) per setting,
# on local desktops (the runner suite: shell, editor, dialog, question,
# infeasible) and in the browser environment (web pages of suites/web).
# For each: rollouts per hour, the median and 90th percentile of the step
# and create (reset + setup + first observation) latencies as the client
# sees them; then proctor run --agent replay --parallel WORKERS on the
# same tasks for the same time, and its episodes per hour. The step
# overhead of the service over a direct environment call is measured
# apart, by BenchmarkStepOverhead (package rollout, in-memory desktop).
# Usage: bench/rollout.sh [SECONDS] [WORKERS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
workers=${2:-2}
go build -o bin/proctor ./cmd/proctor
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
(umask 077; head -c 24 /dev/urandom | base64 > "$tmp/token")
web='^(forms-employees-qa|confirm-archive-t203|modal-edit-hopper|tabs-order-brightwater|table-overdue-paid)$'

# serve SUITE FLAGS...: starts proctor serve, sets url.
serve() {
	bin/proctor serve "$@" --parallel "$workers" --token-file "$tmp/token" --insecure-loopback --listen 127.0.0.1:0 \
		--per-client 1 --out "$tmp/serve-$RANDOM" 2>"$tmp/serve.log" &
	pid=$!
	for _ in $(seq 600); do
		url=$(grep -o 'http://127.0.0.1:[0-9]*' "$tmp/serve.log" | head -1 || true)
		[ -n "$url" ] && return
		sleep 0.1
	done
	cat "$tmp/serve.log" >&2
	exit 1
}

# replay SUITE FLAGS...: proctor run --agent replay for secs; episodes per hour.
replay() {
	local out="$tmp/run-$RANDOM" start end n
	start=$(date +%s.%N)
	timeout -s INT "$secs" bin/proctor run "$@" --agent replay --parallel "$workers" --repeat 10000 --report none --out "$out" >/dev/null 2>&1 || true
	end=$(date +%s.%N)
	n=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from result").fetchone()[0])' "$out/results.db")
	python3 -c 'import sys; n,s=int(sys.argv[1]),float(sys.argv[2]); print("{\"episodes\": %d, \"seconds\": %.1f, \"per_hour\": %d}" % (n, s, n*3600/s))' "$n" "$(echo "$end - $start" | bc)"
}

echo "== desktops (testdata/runner), $workers workers, ${secs}s"
serve testdata/runner
echo -n "proctor serve: "
python3 bench/rollout_bench.py --url "$url" --token-file "$tmp/token" --seconds "$secs" --workers "$workers"
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
echo -n "proctor run:   "
replay testdata/runner

echo "== browser (suites/web, 5 pages), $workers workers, ${secs}s"
serve suites/web --env browser --filter "$web"
echo -n "proctor serve: "
python3 bench/rollout_bench.py --url "$url" --token-file "$tmp/token" --seconds "$secs" --workers "$workers"
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
echo -n "proctor run:   "
replay suites/web --env browser --filter "$web"

echo "== step overhead over a direct environment call (in-memory desktop)"
go test ./rollout -run '^$' -bench StepOverhead -benchtime 200x | grep -E '^Benchmark'
