# Sourced by the scripts: finds Go (1.26 or newer) and installs the Debian
# packages a script names when they are missing. Runs as root on Debian.
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"
export DEBIAN_FRONTEND=noninteractive

# need_pkgs installs the Debian packages whose commands are missing:
# need_pkgs command:package ... (a command with a slash is a file path)
need_pkgs() {
	local missing=()
	for pair in "$@"; do
		local want=${pair%%:*}
		case "$want" in
		*/*) [ -e "$want" ] || missing+=("${pair#*:}") ;;
		*) command -v "$want" >/dev/null 2>&1 || missing+=("${pair#*:}") ;;
		esac
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "installing ${missing[*]}" >&2
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	fi
}

need_pkgs git:git gcc:gcc
if ! command -v go >/dev/null 2>&1; then
	need_pkgs go:golang-go
fi
go_minor=$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')
if [ "${go_minor:-0}" -lt 26 ]; then
	echo "Proctor needs Go 1.26 or newer (found $(go env GOVERSION)); install it under /usr/local/go" >&2
	exit 1
fi
export PATH="$PATH:$(go env GOPATH)/bin"

# need_desktop installs what the local X11 desktop needs: the X server,
# window manager, D-Bus, AT-SPI, clipboard and open helpers.
need_desktop() {
	need_pkgs Xvfb:xvfb openbox:openbox dbus-daemon:dbus /usr/libexec/at-spi-bus-launcher:at-spi2-core \
		xclip:xclip xdg-open:xdg-utils
}

# need_suite_apps installs the applications of the built-in suite
# (suites/desktop) and the accessibility bridge GIMP's toolkit needs.
need_suite_apps() {
	need_pkgs mousepad:mousepad yad:yad kcalc:kcalc xterm:xterm \
		localc:libreoffice-calc lowriter:libreoffice-writer \
		/usr/lib/libreoffice/program/libvclplug_gtk3lo.so:libreoffice-gtk3 \
		gimp:gimp /usr/lib/x86_64-linux-gnu/gtk-2.0/modules/libatk-bridge.so:libatk-adaptor \
		chromium:chromium
}
