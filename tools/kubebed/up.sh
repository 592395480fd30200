#!/bin/sh
# Starts the test bed in the background: builds (or reuses) its binaries,
# builds proctor for the pods to run, and starts a control plane and
# NODES stand-in nodes (default 2) whose files go under DIR. Prints the
# kubeconfig to use once every node is Ready; tools/kubebed/down.sh DIR
# stops it all. RUNNER podman runs the pods as podman containers of
# images in podman's store (images/guest/build.sh makes the guest image)
# instead of local processes.
#
#   tools/kubebed/up.sh DIR [NODES] [RUNNER]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=${1:?usage: up.sh DIR [NODES] [RUNNER]}
nodes=${2:-2}
runner=${3:-process}
mkdir -p "$dir/bin"
dir=$(cd "$dir" && pwd)
bin=$("$here/build.sh")
(cd "$root" && go build -o "$dir/bin/proctor" ./cmd/proctor)
rm -f "$dir/ready"
nohup "$bin/kubebed" --dir "$dir" --bin "$bin" --nodes "$nodes" --path "$dir/bin" --runner "$runner" >"$dir/kubebed.log" 2>&1 &
echo $! >"$dir/kubebed.pid"
i=0
while [ ! -f "$dir/ready" ]; do
	if ! kill -0 "$(cat "$dir/kubebed.pid")" 2>/dev/null; then
		cat "$dir/kubebed.log" >&2
		exit 1
	fi
	i=$((i + 1))
	if [ $i -gt 600 ]; then
		echo "the test bed is not ready after 60s: see $dir/logs" >&2
		exit 1
	fi
	sleep 0.1
done
echo "export KUBECONFIG=$dir/kubeconfig"
