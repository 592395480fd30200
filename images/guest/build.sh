#!/bin/sh
# Builds the guest image from Debian's packages without a registry: the
# packages of base.txt (and of each variant's list) into a root file system
# with mmdebstrap, bin/proctor added, then imported as an image with podman
# when it is installed, else left as a tar archive for `podman import` or
# `docker import` elsewhere. The same lists make the Containerfile's image.
#
#   images/guest/build.sh [-o OUT.tar] [-t NAME] [VARIANT...]
#
# Run from anywhere, as root (or with mmdebstrap's unshare mode), after
# `go build -o bin/proctor ./cmd/proctor`. The Debian mirror is the
# machine's apt source unless $DEBIAN_MIRROR is set.
#
# The base image, on a 2-core machine from a Debian mirror: 791 s for
# mmdebstrap (a 750 MiB archive), 56 s for podman import (786 MB in
# podman's store).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/bin/proctor-guest.tar
name=proctor-guest:latest
while getopts o:t: opt; do
	case $opt in
	o) out=$OPTARG ;;
	t) name=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
lists=$here/base.txt
for v in "$@"; do
	[ -f "$here/$v.txt" ] || { echo "no package list $here/$v.txt" >&2; exit 2; }
	lists="$lists $here/$v.txt"
done
[ -x "$root/bin/proctor" ] || { echo "build bin/proctor first: go build -o bin/proctor ./cmd/proctor" >&2; exit 2; }
packages=$(grep -hv '^#' $lists | tr '\n' ',' | sed 's/,*$//')
start=$(date +%s)
mmdebstrap --variant=minbase --include="$packages" \
	--customize-hook="copy-in $root/bin/proctor /usr/local/bin" \
	--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
	bookworm "$out" ${DEBIAN_MIRROR:-}
echo "root file system: $out ($(du -h "$out" | cut -f1), $(( $(date +%s) - start ))s)" >&2
if command -v podman >/dev/null 2>&1; then
	podman import --change 'ENTRYPOINT ["/usr/local/bin/proctor", "guest", "--local"]' "$out" "$name" >/dev/null
	podman image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' "$name" >&2
fi
