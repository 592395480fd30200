#!/usr/bin/env bash
# Validates tasks of the built-in suite on two guest daemons, each started
# as a process of its own (as on two machines) serving TLS with a
# self-signed certificate that the runner pins by fingerprint.
# Usage: scripts/guests-validate.sh [FILTER]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
filter=${1:-}
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM # exit runs the cleanup: the guests stop with the script
go build -buildvcs=auto -o "$work/proctor" ./cmd/proctor
(umask 077; head -c 24 /dev/urandom | base64 > "$work/token")
for i in 1 2; do
	"$work/proctor" guest --local --listen 127.0.0.1:0 --token-file "$work/token" 2> "$work/guest$i.log" &
	pids+=($!)
done
envs=()
for i in 1 2; do
	for _ in $(seq 120); do
		grep -q 'serving on https://' "$work/guest$i.log" && break
		sleep 0.5
	done
	target=$(grep -o 'serving on https://[^ ]*' "$work/guest$i.log" | cut -d' ' -f3)
	if [ -z "$target" ]; then
		echo "guest $i did not start:" >&2
		cat "$work/guest$i.log" >&2
		exit 1
	fi
	echo "guest $i: $target"
	envs+=(--env "guest=$target")
done
"$work/proctor" validate suites/desktop --filter "$filter" --token-file "$work/token" "${envs[@]}" >/dev/null
