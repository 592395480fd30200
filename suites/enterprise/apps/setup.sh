#!/bin/bash
# setup.sh: install Tryton 6, Request Tracker 5 and Redmine 5 from Debian 12 and make a seeded,
# pristine SQLite instance of each under $PROCTOR_SUITE_DATA (`proctor setup suites/enterprise`
# sets it; else ${PROCTOR_ENTERPRISE:-/var/lib/proctor/enterprise})/<app>/.
# Idempotent and non-interactive; run as root.
# Usage: setup.sh [--rebuild] [tryton|rt|redmine ...] (default: all)
#
# The instances are built by build-APP.sh and seed_APP.* (deterministic seeds). Their output is
# kept in pristine/APP.tar.gz with its stamp (a hash of the scripts and of the installed package
# versions): where the stamp matches, the snapshot is unpacked instead of built (seconds instead
# of minutes), so every machine gets the same rows. --rebuild builds from the seeds whatever the
# snapshots say, and writes new snapshots.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
usage() { sed -n 's/^# Usage: //p' "$0"; }
REBUILD= APPS=
for arg in "$@"; do
  case $arg in
    --rebuild) REBUILD=1 ;;
    -h|--help) usage; exit 0 ;;
    tryton|rt|redmine) APPS="$APPS $arg" ;;
    *) echo "setup.sh: unknown argument '$arg'" >&2; usage >&2; exit 2 ;;
  esac
done
APPS=${APPS:-tryton rt redmine}
SNAP="$HERE/pristine"
mkdir -p "$BASE"

apt_updated=
apt_install() {  # apt_install PKG...: install only what is missing
  pkgs_installed "$@" && return 0
  [ -n "$apt_updated" ] || { apt-get update -q >/dev/null; apt_updated=1; }
  apt-get install -y -q --no-install-recommends "$@" >/dev/null
}

# ---- packages -------------------------------------------------------------------------------
install_base() { apt_install bc sqlite3 curl ca-certificates procps iproute2 util-linux; }  # ss, setpriv

TRYTON_PKGS="tryton-server tryton-sao tryton-modules-sale-opportunity tryton-proteus"
install_tryton() {
  apt_install $TRYTON_PKGS
  # Debian may start a system trytond on :8000; we only use our own instances.
  if [ -x /etc/init.d/tryton-server ]; then /etc/init.d/tryton-server stop >/dev/null 2>&1 || true; fi
}

RT_PKGS="request-tracker5 rt5-db-sqlite libdbd-sqlite3-perl w3m"  # w3m: RT's HTML-to-text (else a warning per start)
install_rt() {
  pkgs_installed $RT_PKGS && return 0
  # dbconfig questions answered up front: sqlite3, no cron jobs (we build our own DB per instance).
  debconf-set-selections <<'SEL'
request-tracker5 request-tracker5/dbconfig-install boolean true
request-tracker5 request-tracker5/database-type select sqlite3
request-tracker5 request-tracker5/install-cronjobs boolean false
request-tracker5 request-tracker5/rtname string proctor.example
request-tracker5 request-tracker5/correspondaddress string rt@proctor.example
request-tracker5 request-tracker5/commentaddress string rt-comment@proctor.example
request-tracker5 request-tracker5/webbaseurl string http://localhost
SEL
  apt_install $RT_PKGS
}

REDMINE_PKGS="redmine redmine-sqlite passenger"
install_redmine() {
  pkgs_installed $REDMINE_PKGS && return 0
  debconf-set-selections <<'SEL'
redmine redmine/instances/default/dbconfig-install boolean true
redmine redmine/instances/default/database-type select sqlite3
SEL
  # Ruby's security update ships a newer bundler than Debian's redmine was packaged with; its
  # postinst then fails ("Could not find racc-1.6.2.gem"). Pinning BUNDLER_VERSION fixes it.
  BUNDLER_VERSION=2.3.15 apt_install $REDMINE_PKGS || BUNDLER_VERSION=2.3.15 dpkg --configure -a
  pkgs_installed $REDMINE_PKGS
}

# ---- pristine instances ---------------------------------------------------------------------
# stamp_of APP: hash of everything that shapes the pristine instance of APP
stamp_of() {
  local pk
  case $1 in tryton) pk=$TRYTON_PKGS ;; rt) pk=$RT_PKGS ;; redmine) pk=$REDMINE_PKGS ;; esac
  { cat "$HERE/lib.sh" "$HERE"/build-"$1".sh "$HERE"/seed_"$1".*
    dpkg-query -W -f='${Package} ${Version}\n' $pk; } | sha256sum | cut -c1-16
}

build_app() {  # build APP into $BASE/APP unless its stamp is current
  local app=$1 want; want=$(stamp_of "$app")
  if [ "$(cat "$BASE/$app/.stamp" 2>/dev/null)" = "$want" ]; then
    echo "phase build+seed $app: up to date (stamp $want), skipped"; return 0
  fi
  local tmp="$BASE/.$app.building"
  rm -rf "$tmp"; mkdir -p "$tmp"
  if [ -z "$REBUILD" ] && [ "$(cat "$SNAP/$app.stamp" 2>/dev/null)" = "$want" ]; then
    tar -xzf "$SNAP/$app.tar.gz" -C "$tmp"   # as root: owners (www-data) kept
    echo "phase build+seed $app: unpacked pristine/$app.tar.gz (stamp $want)"
  else
    bash "$HERE/build-$app.sh" "$tmp"
    if [ -w "$HERE" ]; then
      mkdir -p "$SNAP"
      tar -czf "$SNAP/$app.tar.gz" --sort=name --mtime=@0 --numeric-owner -C "$tmp" .
      echo "$want" > "$SNAP/$app.stamp"
      echo "phase build+seed $app: built from the seeds; wrote pristine/$app.tar.gz (stamp $want)"
    fi
  fi
  echo "$want" > "$tmp/.stamp"
  rm -rf "$BASE/$app"; mv "$tmp" "$BASE/$app"
}

t=$(now); install_base; phase_done "install base" "$t"
for app in $APPS; do
  t=$(now); "install_$app"; phase_done "install $app" "$t"
done
for app in $APPS; do
  t=$(now); build_app "$app"; phase_done "build+seed $app" "$t"
done

# ---- disk use -------------------------------------------------------------------------------
# pkg_mib "PKG...": MiB of the packages apt installed in the runs that asked for the first PKG
# (from /var/log/apt/history.log, so it also works on later runs); else the named packages.
pkg_mib() {
  local names
  names=$(awk -v want=" ${1%% *}" '
    /^Commandline: / { hit = index($0 " ", want " ") > 0 }
    hit && /^Install: / { print }' /var/log/apt/history.log 2>/dev/null \
    | sed 's/^Install: //; s/ ([^)]*)//g; s/,//g; s/:[a-z0-9]*//g' | tr ' ' '\n' | sort -u)
  [ -n "$names" ] || names=$1
  dpkg-query -W -f='${Installed-Size}\n' $names 2>/dev/null | awk '{s+=$1} END {printf "%.0f", s/1024}'
}
echo "disk (packages installed for the app, by dpkg Installed-Size; pristine instance by du):"
for app in $APPS; do
  case $app in
    tryton)  pk=$TRYTON_PKGS ;;
    rt)      pk=$RT_PKGS ;;
    redmine) pk=$REDMINE_PKGS ;;
  esac
  printf '  %-8s packages %5s MiB   pristine %s (%s)\n' "$app" "$(pkg_mib "$pk")" \
    "$(du -sh "$BASE/$app" | cut -f1)" "$BASE/$app"
done
