#!/usr/bin/env bash
# Sets up Proctor and runs its main job on the built-in default: the replay
# agent on the built-in suite (suites/desktop), on local desktops, then the
# report. Pass another agent as the first argument (noop, random, ...).
cd "$(dirname "$0")/.."
. scripts/env.sh
need_desktop
need_suite_apps
agent=${1:-replay}
# -buildvcs=auto: the run records the revision it was built from, even
# where GOFLAGS turns VCS stamping off.
go build -buildvcs=auto -o bin/proctor ./cmd/proctor
echo "== proctor tasks lint suites/desktop"
bin/proctor tasks lint suites/desktop
echo "== proctor run --agent $agent --parallel 2"
bin/proctor run --agent "$agent" --parallel 2
echo "== view the runs: bin/proctor view runs  (then open http://127.0.0.1:8080/)"
