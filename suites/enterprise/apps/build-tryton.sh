#!/bin/bash
# build-tryton.sh DIR: create the pristine Tryton database DIR/proctor.sqlite and seed it.
# Called by setup.sh with an empty DIR; leaves proctor.sqlite (+ attachment filestore) in DIR.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); . "$HERE/lib.sh"
DIR=$1; DB=proctor
CONF=$(mktemp /tmp/ent-tryton-build.XXXXXX.conf)
trap 'rm -f "$CONF" "$CONF.pass"' EXIT
printf '[database]\nuri = sqlite://\npath = %s\n' "$DIR" > "$CONF"
printf 'proctor-admin\n' > "$CONF.pass"            # admin password (TRYTONPASSFILE is read by --all)
touch "$DIR/$DB.sqlite"
t=$(now)
TRYTONPASSFILE="$CONF.pass" /usr/bin/trytond-admin -c "$CONF" -d "$DB" --all --email admin@proctor.example >/dev/null 2>&1
/usr/bin/trytond-admin -c "$CONF" -d "$DB" -u party company product sale sale_opportunity --activate-dependencies >/dev/null 2>&1
phase_done "tryton create db+modules" "$t"
t=$(now)
$PY "$HERE/seed_tryton.py" "$CONF" "$DB"
phase_done "tryton seed" "$t"
sqlite3 "$DIR/$DB.sqlite" 'VACUUM;'
