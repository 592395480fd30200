#!/usr/bin/env bash
# Sets up Proctor and runs its main job on the built-in default suite.
# Today that is checking and listing the example suite; running agents on
# local desktops comes with the runner.
cd "$(dirname "$0")/.."
. scripts/env.sh
suite=${1:-testdata/example}
go build -o bin/proctor ./cmd/proctor
echo "== proctor tasks lint $suite"
bin/proctor tasks lint "$suite"
echo "== proctor tasks list $suite"
bin/proctor tasks list "$suite"
