#!/bin/bash
# build-rt.sh DIR: create the pristine RT database DIR/rt.sqlite (+ config/cache dirs) and seed it.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); . "$HERE/lib.sh"
DIR=$1
rt_write_config "$DIR" 18999            # port is rewritten by start-rt
export RT_SITE_CONFIG="$DIR/RT_SiteConfig.pm" RT_SITE_CONFIG_DIR="$DIR/RT_SiteConfig.d"
t=$(now)
/usr/sbin/rt-setup-database-5 --action init --skip-create >"$DIR/log/setup.log" 2>&1 \
  || { cat "$DIR/log/setup.log" >&2; exit 1; }
phase_done "rt create db" "$t"
t=$(now)
perl "$HERE/seed_rt.pl"
phase_done "rt seed" "$t"
# Warm RT's Mason cache (compiled page components) so the first pages after a reset do not
# compile for seconds: serve a few pages once, then keep cache/mason_data (not the sessions).
t=$(now)
WPORT=${RT_WARM_PORT:-18998}
rt_write_config "$DIR" "$WPORT"
setsid /usr/share/request-tracker5/libexec/rt-server --host 127.0.0.1 --port "$WPORT" \
  --server Standalone >"$DIR/log/warm.log" 2>&1 &
WPID=$!
for i in $(seq 1 300); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$WPORT/")" = 200 ] && break; sleep 0.2
done
CJ=$(mktemp); U="http://127.0.0.1:$WPORT"
for path in "/?user=root&pass=password" / /Ticket/Display.html?id=1 /Ticket/Display.html?id=2 \
    "/Search/Results.html?Query=Status%3D'open'" /Search/Build.html /Search/Simple.html \
    /Ticket/Create.html?Queue=1 /Ticket/Update.html?id=1 /Ticket/Modify.html?id=1 \
    /Ticket/ModifyPeople.html?id=1 /Ticket/History.html?id=1 /Admin/ /Admin/Queues/ \
    /Admin/Queues/Modify.html?id=1 /Admin/Users/ /Admin/Users/Modify.html?id=14 /Admin/Groups/ \
    /Admin/CustomFields/ /Admin/Global/ /Prefs/Other.html /Dashboards/index.html \
    "/SelfService/?user=oliver.fischer@acme.example&pass=proctor-customer"; do
  curl -s -o /dev/null -b "$CJ" -c "$CJ" "$U$path" || true
done
rm -f "$CJ"
kill -TERM -- "-$WPID" 2>/dev/null || true; wait "$WPID" 2>/dev/null || true
phase_done "rt warm page cache" "$t"
rm -rf "$DIR/log"/* "$DIR/cache/session_data"/*
sqlite3 "$DIR/rt.sqlite" 'VACUUM;'
