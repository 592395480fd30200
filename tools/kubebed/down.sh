#!/bin/sh
# Stops the test bed that tools/kubebed/up.sh DIR started.
#
#   tools/kubebed/down.sh DIR
set -eu
dir=${1:?usage: down.sh DIR}
pid=$(cat "$dir/kubebed.pid")
kill -TERM "$pid" 2>/dev/null || exit 0
while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
rm -f "$dir/kubebed.pid" "$dir/ready"
