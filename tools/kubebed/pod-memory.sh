#!/usr/bin/env bash
# Memory of one guest pod on the test bed, as a process pod or a podman
# container pod: with a bed started (tools/kubebed/up.sh, or kubebed
# --runner podman) and KUBECONFIG set, starts a run of one pod at SIZE
# (default 1920x1080) from IMAGE, holds the run still (SIGSTOP) once its
# pod is Ready, then inside the pod's network namespace resets the
# desktop, takes a screenshot and reads the tree through the guest daemon,
# lets it idle, and prints the proportional set size (PSS,
# /proc/PID/smaps_rollup) of each process of the pod and the memory its
# cgroup charges (usage, and usage less page cache). With PODS=N the run
# has N pods, and one of them is measured: pods of one image share its
# files' pages.
#
#   tools/kubebed/pod-memory.sh DIR [IMAGE] [SIZE]
#
# DIR is the bed's folder (its nodes keep the pods' secrets there). Run as root, from the repository's root, after
# `go build -o bin/proctor ./cmd/proctor`.
set -euo pipefail
bed=${1:?usage: pod-memory.sh DIR [IMAGE] [SIZE]}
image=${2:-proctor-guest:latest}
size=${3:-1920x1080}
tmp=$(mktemp -d)
run=""
trap '[ -n "$run" ] && { kill -CONT "$run"; kill "$run"; wait "$run"; } 2>/dev/null; rm -rf "$tmp"' EXIT
bin/proctor run testdata/runner --agent replay --filter '^shell-write$' --repeat 1000 --out "$tmp/run" \
	--env "kube://default?pods=${PODS:-1}&size=$size&image=$image&wait=120s" >"$tmp/log" 2>&1 &
run=$!
for _ in $(seq 1200); do grep -q 'pods Ready' "$tmp/log" && break; sleep 0.1; done
grep 'pods Ready' "$tmp/log" || { cat "$tmp/log" >&2; exit 1; }
sleep 3
kill -STOP "$run"
sleep 2
# The pod's folder on its node, and the first process of its namespaces.
poddir=$(ls -td "$bed"/node-*/default_proctor-*/ 2>/dev/null | head -1)
token=$(cat "$poddir/volumes/proctor/token")
pid=""
for p in /proc/[0-9]*; do
	p=${p#/proc/}
	[ "$(readlink /proc/$p/ns/net 2>/dev/null)" != "$(readlink /proc/self/ns/net)" ] || continue
	if tr '\0' ' ' </proc/$p/cmdline 2>/dev/null | grep -q "^proctor guest --local\|/proctor guest --local"; then
		pid=$p
		break
	fi
done
[ -n "$pid" ] || { echo "no guest daemon in a pod's namespace" >&2; exit 1; }
api() { nsenter -t "$pid" -n curl -skf -H "Authorization: Bearer $token" -H 'Proctor-API: 1' "$@"; }
api -X POST -H 'Content-Type: application/json' -d '{}' https://127.0.0.1:7400/v1/reset -o /dev/null
api https://127.0.0.1:7400/v1/screenshot -o "$tmp/shot"
api https://127.0.0.1:7400/v1/tree -o /dev/null || true
echo "screenshot: $(stat -c %s "$tmp/shot") bytes"
sleep "${IDLE:-5}"
# Every process in the pod's network namespace.
ns=$(readlink /proc/$pid/ns/net)
total=0
n=0
for p in /proc/[0-9]*; do
	p=${p#/proc/}
	[ "$(readlink /proc/$p/ns/net 2>/dev/null)" = "$ns" ] || continue
	pss=$(awk '/^Pss:/ {print $2}' /proc/$p/smaps_rollup 2>/dev/null || echo 0)
	[ -n "$pss" ] || continue
	printf '  %7d %-16s %7.1f MiB\n' "$p" "$(cat /proc/$p/comm)" "$(echo "$pss/1024" | bc -l)"
	total=$((total + pss))
	n=$((n + 1))
done
printf 'PSS: %.1f MiB over %d processes\n' "$(echo "$total/1024" | bc -l)" "$n"
cg=$(awk -F: '$2 == "memory" {print $3}' /proc/$pid/cgroup)
dir=/sys/fs/cgroup/memory$cg
[ -d "$dir" ] || dir=/sys/fs/cgroup$(awk -F: '$1 == "0" {print $3}' /proc/$pid/cgroup)
# The pod's cgroup: the container's cgroup's parent for a podman pod.
case $(basename "$dir") in libpod-*) dir=$(dirname "$dir") ;; esac
if [ -f "$dir/memory.usage_in_bytes" ]; then
	usage=$(cat "$dir/memory.usage_in_bytes")
	cache=$(awk '$1 == "total_cache" {print $2}' "$dir/memory.stat")
else
	usage=$(cat "$dir/memory.current")
	cache=$(awk '$1 == "file" {print $2}' "$dir/memory.stat")
fi
printf 'cgroup %s: %.1f MiB charged, %.1f MiB without page cache\n' "$dir" "$(echo "$usage/1048576" | bc -l)" \
	"$(echo "($usage-$cache)/1048576" | bc -l)"
