#!/bin/sh
# Builds the test bed's binaries (etcd, kube-apiserver, kube-scheduler,
# standin-kubelet, kubebed) into a cache folder keyed by this module's
# go.sum and sources, and prints that folder. A folder already there is
# reused as it is.
#
#   tools/kubebed/build.sh            build, or reuse, and print the folder
#   tools/kubebed/build.sh --cached   print the folder if it is built; exit 1 if not
#
# The cache is under $PROCTOR_KUBEBED_CACHE (default ~/.cache/proctor/kubebed).
# A fresh build takes several minutes and ~3 GB of Go build cache.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
k8s_version=v1.37.2
key=$(cd "$here" && cat go.sum go.mod $(find cmd -name '*.go' | sort) | sha256sum | cut -c1-16)
cache=${PROCTOR_KUBEBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/proctor/kubebed}
out=$cache/$key
if [ -x "$out/kubebed" ]; then
	echo "$out"
	exit 0
fi
if [ "${1:-}" = "--cached" ]; then
	echo "the test bed is not built: run tools/kubebed/build.sh (it would go to $out)" >&2
	exit 1
fi
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.build-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
v=k8s.io/component-base/version
ldflags="-s -w -X $v.gitVersion=$k8s_version -X $v.gitMajor=1 -X $v.gitMinor=37 -X $v.gitTreeState=clean"
start=$(date +%s)
(cd "$here" && go build -trimpath -ldflags "$ldflags" -o "$tmp/" \
	k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler \
	./cmd/etcd ./cmd/standin-kubelet ./cmd/kubebed)
mv "$tmp" "$out"
trap - EXIT
echo "built the test bed in $(( $(date +%s) - start ))s: $(du -sh "$out" | cut -f1)" >&2
echo "$out"
