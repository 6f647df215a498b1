#!/usr/bin/env bash
# A throwaway PostgreSQL server for the store's postgres-labelled tests.
#   scripts/throwaway-postgres.sh start DIR   # prints the URL to export as DLBENCH_TEST_POSTGRES_URL
#   scripts/throwaway-postgres.sh stop DIR
# The cluster lives in DIR (trust login on 127.0.0.1 only). initdb refuses to run as root, so as
# root the server runs as the Debian package's `postgres` user.
set -euo pipefail
cmd=${1:?start or stop}
dir=${2:?folder}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || { echo "throwaway-postgres: PostgreSQL is not installed (Debian postgresql)" >&2; exit 3; }
port=${DLBENCH_TEST_POSTGRES_PORT:-54329}
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case "$cmd" in
  start)
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
    as_owner "$bin/initdb" -D "$dir/data" -A trust -U dlbench >"$dir/initdb.log" 2>&1
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
    as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U dlbench dlbench_test
    echo "postgresql://dlbench@127.0.0.1:$port/dlbench_test"
    ;;
  stop)
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    rm -rf "$dir"
    ;;
  *) echo "throwaway-postgres: start or stop" >&2; exit 2 ;;
esac
