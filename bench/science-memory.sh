#!/usr/bin/env bash
# science-memory.sh [SUITE] [TASK...]: the memory of a desktop running each
# application of the science suite, so that a user can plan how many run side
# by side. For each task (default: the first task of each application in
# suites/science), `proctor probe --gold` prepares a desktop with the task's
# setup and replays its gold solution, then a command probe sums the
# proportional set size (PSS, from /proc/PID/smaps_rollup) of every process of
# that desktop (those carrying its PROCTOR_DESKTOP marker): the whole desktop
# (Xvfb, D-Bus, AT-SPI, openbox and the apps) and the apps alone. Prints one
# line per task: app, task, desktop MiB, apps MiB. Needs bin/proctor and the
# suite's applications (`bin/proctor setup suites/science`).
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${1:-suites/science}
shift || true
tasks=("$@")
if [ ${#tasks[@]} -eq 0 ]; then
	# The first instance of each app, as `tasks list` orders them.
	mapfile -t tasks < <(bin/proctor tasks list "$suite" 2>/dev/null | awk 'NR > 1 && !seen[$4]++ { print $1 }')
fi
infra='^(Xvfb|dbus-daemon|openbox|at-spi-bus-laun|at-spi2-registr|sleep|bash|awk|tr|grep|cat|sed)$'
# The probe, as JSON (a YAML flow mapping).
probe=$(python3 -c 'import json; print(json.dumps({"command": r"""for p in /proc/[0-9]*; do tr "\0" "\n" < $p/environ 2>/dev/null | grep -qx "PROCTOR_DESKTOP=$PROCTOR_DESKTOP" || continue; echo "$(cat $p/comm) $(awk "/^Pss:/{print \$2}" $p/smaps_rollup 2>/dev/null)"; done"""}))')
printf '%-12s %-40s %12s %9s\n' app task "desktop MiB" "apps MiB"
for id in "${tasks[@]}"; do
	app=$(bin/proctor tasks show "$suite" "$id" 2>/dev/null | python3 -c 'import json,sys; t=json.load(sys.stdin); print(t.get("app") or ",".join(t.get("apps") or ["-"]))')
	out=$(bin/proctor probe "$suite" "$id" "$probe" --gold 2>/dev/null | grep -E '^[^ ]+ [0-9]+$' || true)
	if [ -z "$out" ]; then
		printf '%-12s %-40s %12s\n' "$app" "$id" "(probe failed)"
		continue
	fi
	echo "$out" | awk -v app="$app" -v id="$id" -v infra="$infra" '
		{ t += $2; if ($1 !~ infra) a += $2 }
		END { printf "%-12s %-40s %12.0f %9.0f\n", app, id, t / 1024, a / 1024 }'
done
