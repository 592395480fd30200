#!/bin/bash
# build-redmine.sh DIR: create the pristine Redmine instance in DIR (redmine.sqlite3 + config/,
# files/, log/, tmp/) with Redmine's default data, then seed it. Owned by www-data (the app user).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); . "$HERE/lib.sh"
DIR=$1
redmine_write_config "$DIR"
chown -R www-data:www-data "$DIR"
redmine_env "$DIR"
cd /usr/share/redmine
asweb() { setpriv --reuid=www-data --regid=www-data --init-groups -- "$@"; }
t=$(now)
SCHEMA="$DIR/tmp/schema.rb" asweb bundle exec rake db:migrate >"$DIR/log/build.log" 2>&1 || { tail -30 "$DIR/log/build.log" >&2; exit 1; }
asweb bundle exec rake redmine:load_default_data >>"$DIR/log/build.log" 2>&1 || { tail -30 "$DIR/log/build.log" >&2; exit 1; }
phase_done "redmine create db" "$t"
t=$(now)
cp "$HERE/seed_redmine.rb" "$DIR/tmp/seed_redmine.rb"
asweb bundle exec rails runner "$DIR/tmp/seed_redmine.rb" 2>&1 | grep -v "warning: " || true
[ "$(sqlite3 "$DIR/redmine.sqlite3" "select count(*) from issues")" -gt 0 ] || { echo "redmine seed failed" >&2; exit 1; }
phase_done "redmine seed" "$t"
rm -rf "$DIR/tmp/seed_redmine.rb" "$DIR/tmp/schema.rb" "$DIR/log/build.log" "$DIR/tmp/cache"/* "$DIR/log"/*.log "$DIR/log/mails"/*
sqlite3 "$DIR/redmine.sqlite3" 'VACUUM;'
chown -R www-data:www-data "$DIR"
