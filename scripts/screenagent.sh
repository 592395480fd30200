#!/usr/bin/env bash
# The ScreenAgent setting: sets up, then runs an agent on tasks of the
# built-in suite on a desktop reached over VNC, and reports with CC-Score.
# A "proctor guest --local --vnc" serves the desktop twice: its screen and
# input over VNC (x11vnc), which the run drives, and its setup, tree and
# probes over HTTPS, which the run uses beside it.
# Usage: scripts/screenagent.sh [AGENT [RUN FLAGS...]]
#   scripts/screenagent.sh                       # the gold solutions (replay)
#   scripts/screenagent.sh reflect --format screenagent --model M --base-url URL
# The task set is $SCREENAGENT_TASKS (a --filter pattern).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
need_desktop
need_suite_apps
need_pkgs x11vnc:x11vnc
agent=${1:-replay}
shift || true
tasks=${SCREENAGENT_TASKS:-'^(calc-product|dialog-answer-install-now|dialog-answer-skip-this-version|editor-write-1|files-create-notes-txt|count-words-1|append-milk-(gui|cli)|form-contact-rosa|sheet-total-q1|doc-heading-title|web-order-team)$'}
work=$(mktemp -d)
guest_pid=
cleanup() {
	[ -n "$guest_pid" ] && kill "$guest_pid" 2>/dev/null && wait "$guest_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
go build -buildvcs=auto -o bin/proctor ./cmd/proctor
(umask 077; head -c 24 /dev/urandom | base64 > "$work/token")
bin/proctor guest --local --vnc 127.0.0.1:0 --token-file "$work/token" 2> "$work/guest.log" &
guest_pid=$!
for _ in $(seq 120); do
	grep -q '^VNC on vnc://' "$work/guest.log" && break
	sleep 0.5
done
target=$(grep -o 'serving on https://[^ ]*' "$work/guest.log" | cut -d' ' -f3 || true)
vnc=$(grep -o 'VNC on vnc://[^ ]*' "$work/guest.log" | cut -d' ' -f3 || true)
if [ -z "$target" ] || [ -z "$vnc" ]; then
	echo "the guest did not start:" >&2
	cat "$work/guest.log" >&2
	exit 1
fi
echo "== desktop over VNC at $vnc, its guest at $target"
out=runs/screenagent-$(date +%Y%m%d-%H%M%S)
echo "== proctor run --agent $agent --env $vnc --vnc-guest ... --out $out"
bin/proctor run --suite suites/desktop --agent "$agent" --filter "$tasks" --env "$vnc" --vnc-guest "$target" \
	--token-file "$work/token" --out "$out" "$@" >/dev/null
echo "== proctor report $out --ccscore"
bin/proctor report "$out" --ccscore
