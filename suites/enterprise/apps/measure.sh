#!/bin/bash
# measure.sh [APP...]: with the pristine instances built by setup.sh, for each app (default: all)
# copy pristine to a temp DATADIR, start it, wait for ready, prove isolation (create a record over
# the HTTP API, reset, show it is gone), measure N (default 20) resets (stop, rm DATADIR, cp -a
# pristine, start, ready) and print median/max reset time and the RSS/PSS of the running app.
# Env: N (resets), PORT (default 18500). Uses a temp folder under /tmp/entmeasure.*.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); . "$HERE/lib.sh"
N=${N:-20}; PORT=${PORT:-18500}
APPS_=${*:-tryton rt redmine}
WORK=$(mktemp -d /tmp/entmeasure.XXXXXX); chmod 755 "$WORK"   # redmine runs as www-data
PGID=
cleanup() { [ -z "$PGID" ] || stop_app; rm -rf "$WORK"; }
trap cleanup EXIT

ready_url() {
  case $1 in tryton) echo "http://127.0.0.1:$PORT/" ;; rt) echo "http://127.0.0.1:$PORT/" ;;
    redmine) echo "http://127.0.0.1:$PORT/login" ;; esac
}
start_app() {  # start_app APP: start in its own process group (setsid), remember the group
  # env marker (set for the app only) finds every process of the instance later
  PROCTOR_INSTANCE_DIR="$WORK/data" setsid "$HERE/start-$1" "$PORT" "$WORK/data" >>"$WORK/$1.log" 2>&1 &
  PGID=$!
}
wait_ready() {  # wait_ready APP: poll the readiness URL until it answers 200 (max 120 s)
  local url i; url=$(ready_url "$1")
  for i in $(seq 1 1200); do
    [ "$(curl -s -o /dev/null --max-time 5 -w '%{http_code}' "$url" 2>/dev/null)" = 200 ] && return 0
    kill -0 "$PGID" 2>/dev/null || break            # start script exited: give up now
    sleep 0.1
  done
  echo "not ready: $url" >&2; tail -20 "$WORK/$1.log" >&2; return 1
}
instance_pids() {  # every process carrying our marker (passenger detaches from the group)
  grep -lzx "PROCTOR_INSTANCE_DIR=$WORK/data" /proc/[0-9]*/environ 2>/dev/null \
    | sed 's|^/proc/\([0-9]*\)/environ$|\1|' || true
}
stop_app() {  # SIGTERM the group, wait until no instance process is left and the port is free
  kill -TERM -- "-$PGID" 2>/dev/null || true
  local i
  for i in $(seq 1 300); do
    if [ -z "$(instance_pids)" ] && ! ss -ltn "sport = :$PORT" | grep -q LISTEN; then PGID=; return 0; fi
    sleep 0.05
  done
  echo "still running after 15 s, SIGKILL" >&2
  kill -KILL -- "-$PGID" $(instance_pids) 2>/dev/null || true; PGID=
}
memory() {  # RSS and PSS (MiB) summed over the instance's processes
  local rss=0 pss=0 p n=0
  for p in $(instance_pids); do
    rss=$((rss + $(awk '/^VmRSS/ {print $2}' /proc/$p/status 2>/dev/null || echo 0)))
    pss=$((pss + $(awk '/^Pss:/ {print $2}' /proc/$p/smaps_rollup 2>/dev/null || echo 0)))
    n=$((n + 1))
  done
  echo "RSS $((rss / 1024)) MiB, PSS $((pss / 1024)) MiB over $n processes"
}

# --- per-app HTTP API: create a marker record, count marker records -----------------------------
MARK="ZZ isolation probe"
tryton_rpc() {  # tryton_rpc METHOD PARAMS-JSON: logged-in JSON-RPC call as admin
  local url="http://127.0.0.1:$PORT/proctor/" r auth
  r=$(curl -s -H 'Content-Type: application/json' -d \
    '{"id":1,"method":"common.db.login","params":["admin",{"password":"proctor-admin"},"en"]}' "$url")
  auth=$(printf 'admin:%s:%s' "$(echo "$r" | sed 's/.*"result": *\[\([0-9]*\), *"\([0-9a-f]*\)".*/\1/')" \
    "$(echo "$r" | sed 's/.*"result": *\[\([0-9]*\), *"\([0-9a-f]*\)".*/\2/')" | base64 -w0)
  curl -s -H 'Content-Type: application/json' -H "Authorization: Session $auth" \
    -d "{\"id\":2,\"method\":\"$1\",\"params\":$2}" "$url"
}
api_create() {
  case $1 in
    tryton) tryton_rpc model.party.party.create "[[{\"name\":\"$MARK\"}],{}]" ;;
    rt) curl -s -u root:password -H 'Content-Type: application/json' -d \
          "{\"Queue\":\"General\",\"Subject\":\"$MARK\"}" "http://127.0.0.1:$PORT/REST/2.0/ticket" ;;
    redmine) curl -s -H "X-Redmine-API-Key: $REDMINE_KEY" -H 'Content-Type: application/json' -d \
          "{\"project\":{\"name\":\"$MARK\",\"identifier\":\"zz-isolation-probe\"}}" \
          "http://127.0.0.1:$PORT/projects.json" ;;
  esac | cut -c1-120; echo
}
api_count() {  # number of marker records the API returns
  case $1 in
    tryton) tryton_rpc model.party.party.search_count "[[[\"name\",\"=\",\"$MARK\"]],{}]" \
              | sed 's/.*"result": *\([0-9]*\).*/\1/' ;;
    rt) curl -s -u root:password -G --data-urlencode "query=Subject = '$MARK'" \
          "http://127.0.0.1:$PORT/REST/2.0/tickets" | sed -n 's/.*"total" *: *\([0-9]*\).*/\1/p' ;;
    redmine) curl -s -o /dev/null -w '%{http_code}' -H "X-Redmine-API-Key: $REDMINE_KEY" \
          "http://127.0.0.1:$PORT/projects/zz-isolation-probe.json" | sed 's/^200$/1/; s/^404$/0/' ;;
  esac
}
REDMINE_KEY=a1b2c3d4e5f60718293a4b5c6d7e8f9012345678

for app in $APPS_; do
  P="$BASE/$app"
  [ -f "$P/.stamp" ] || { echo "$app: no pristine instance at $P (run setup.sh)"; continue; }
  echo "== $app (pristine $P, port $PORT, readiness $(ready_url "$app"))"
  rm -rf "$WORK/data"; cp -a "$P" "$WORK/data"
  t=$(now); start_app "$app"; wait_ready "$app"
  printf '  first start: %.2f s to ready\n' "$(echo "$(now) - $t" | bc)"
  echo "  isolation: create -> $(api_create "$app")"
  echo "  isolation: marker records via API before reset: $(api_count "$app")"
  echo "  memory after API use: $(memory)"
  times=()
  for i in $(seq 1 "$N"); do
    t=$(now)
    stop_app; rm -rf "$WORK/data"; cp -a "$P" "$WORK/data"; start_app "$app"; wait_ready "$app"
    times+=("$(echo "$(now) - $t" | bc)")
    [ "$i" != 1 ] || echo "  isolation: marker records via API after reset: $(api_count "$app")"
  done
  printf '%s\n' "${times[@]}" | sort -n | awk -v n="$N" '
    { a[NR] = $1 } END { m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2;
      printf "  %d resets: median %.2f s, min %.2f s, max %.2f s\n", n, m, a[1], a[n] }'
  echo "  memory after reset (idle): $(memory)"
  stop_app
done
