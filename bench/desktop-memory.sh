#!/usr/bin/env bash
# Memory of an idle desktop with its daemon: starts proctor guest --local
# (Xvfb, openbox, D-Bus, AT-SPI, the daemon and its watchdog), takes one
# screenshot and reads the tree once, lets it idle, and sums the
# proportional set size (PSS, /proc/PID/smaps_rollup) of every process of
# that desktop: the daemon, its watchdog, and each process carrying the
# desktop's marker. Repeats RUNS times (default 3) and prints each run's
# table, then the medians of the total and of the daemon with its watchdog.
# Usage: bench/desktop-memory.sh [RUNS] [SIZE]   (BIN=path: a built proctor)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
size=${2:-1920x1080}
bin=${BIN:-bin/proctor}
[ -n "${BIN:-}" ] || go build -o bin/proctor ./cmd/proctor
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
(umask 077; head -c 24 /dev/urandom | base64 > "$tmp/token")
for run in $(seq "$runs"); do
	"$bin" guest --local --insecure --listen 127.0.0.1:0 --size "$size" --token-file "$tmp/token" 2>"$tmp/guest.log" &
	pid=$!
	url=""
	for _ in $(seq 600); do
		url=$(grep -o 'http://127.0.0.1:[0-9]*' "$tmp/guest.log" | head -1 || true)
		[ -n "$url" ] && break
		sleep 0.1
	done
	[ -n "$url" ] || { cat "$tmp/guest.log" >&2; exit 1; }
	auth="Authorization: Bearer $(cat "$tmp/token")"
	curl -sf -H "$auth" "$url/v1/screenshot" -o /dev/null
	curl -sf -H "$auth" "$url/v1/tree" -o /dev/null || true
	sleep "${IDLE:-5}"
	python3 bench/desktop_memory.py "$pid" >>"$tmp/runs.jsonl"
	kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
done
python3 - "$tmp/runs.jsonl" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
for i, r in enumerate(runs, 1):
    print("run %d:" % i)
    for p in r["processes"]:
        print("  %7d %-22s %7.1f MB" % (p["pid"], p["comm"], p["pss_kb"] / 1024))
    print("  total %.1f MB, daemon and watchdog %.1f MB" % (r["total_kb"] / 1024, r["daemon_kb"] / 1024))
med = lambda k: statistics.median(r[k] for r in runs) / 1024
print("median of %d runs: total %.1f MB PSS, daemon and watchdog %.1f MB PSS" % (len(runs), med("total_kb"), med("daemon_kb")))
PY
