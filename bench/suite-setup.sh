#!/usr/bin/env bash
# Time and disk of `proctor setup` for each suite named, on a machine that
# ran the main command and nothing else: a container of the guest image
# (images/guest, Debian with the desktop's packages) in which the main
# command's applications (scripts/env.sh need_desktop and need_suite_apps)
# are installed first, kept as an image; then each suite's set-up runs in a
# fresh container of that image. For each it prints proctor setup's own
# lines (the packages installed and how long they took), the downloaded
# archives' size and the disk the set-up added (the container's writable
# layer once apt's archives are cleaned). Downloads come from the
# machine's Debian mirror, so times say how fast that is from here.
#
# Needs podman and runc (images/guest/build.sh builds the image) and root.
# Usage: bench/suite-setup.sh IMAGE SUITE_DIR...
#   e.g. bench/suite-setup.sh localhost/proctor-guest:test imported/osworld imported/osuniverse
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || {
	echo "usage: bench/suite-setup.sh IMAGE SUITE_DIR..." >&2
	exit 2
}
image=$1
shift
. scripts/env.sh
need_pkgs podman:podman runc:runc
tmp=$(mktemp -d)
base=localhost/proctor-setup-base:$$
cleanup() {
	podman rm -f proctor-setup-base-$$ >/dev/null 2>&1 || true
	podman rmi -f "$base" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
# podman here can neither raise the default limits nor use bridge
# networks: the host's limits and network.
run=(podman run --runtime runc --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit "nproc=4096:4096" --network host --entrypoint bash)
CGO_ENABLED=0 go build -o "$tmp/proctor" ./cmd/proctor

# The main command's packages, by scripts/env.sh's own functions.
sed -n '/^need_pkgs()/,/^}/p;/^need_desktop()/,/^}/p;/^need_suite_apps()/,/^}/p' scripts/env.sh >"$tmp/apps.sh"
echo "main command's applications:" >&2
start=$(date +%s)
"${run[@]}" --name proctor-setup-base-$$ -v "$tmp:/bench:ro" "$image" -c \
	'export DEBIAN_FRONTEND=noninteractive; . /bench/apps.sh; need_desktop; need_suite_apps; apt-get clean' >&2
echo "  installed in $(($(date +%s) - start)) s, $(($(podman container inspect --size -f '{{.SizeRw}}' proctor-setup-base-$$) / 1048576)) MiB" >&2
podman commit -q proctor-setup-base-$$ "$base" >/dev/null
podman rm proctor-setup-base-$$ >/dev/null

printf '%-16s %10s %12s %12s\n' suite "time (s)" "download MiB" "disk MiB"
for dir in "$@"; do
	name=$(basename "$dir")
	c=proctor-setup-$name-$$
	start=$(date +%s)
	"${run[@]}" --name "$c" -v "$tmp/proctor:/usr/local/bin/proctor:ro" -v "$(realpath "$dir"):/suite:ro" "$base" -c \
		'proctor setup /suite >&2 && du -sm /var/cache/apt/archives | cut -f1 >/tmp/download && apt-get clean' >&2
	secs=$(($(date +%s) - start))
	dl=$(podman cp "$c:/tmp/download" - | tar -xO)
	disk=$(($(podman container inspect --size -f '{{.SizeRw}}' "$c") / 1048576))
	podman rm "$c" >/dev/null
	printf '%-16s %10s %12s %12s\n' "$name" "$secs" "$dl" "$disk"
done
