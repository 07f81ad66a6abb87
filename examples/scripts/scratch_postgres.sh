#!/bin/sh
# A scratch PostgreSQL for examples/004_sysbench_oltp_postgres.toml, run as that plan's [target]:
#   scratch_postgres.sh PORT TABLES ROWS
# Creates a fresh data directory under ${TMPDIR:-/tmp}, starts PostgreSQL on 127.0.0.1:PORT only
# (socket in the data directory, nothing system-wide is touched), loads sysbench's OLTP tables, prints
# "perflab-scratch-postgres ready" (the plan's ready check) and waits. SIGINT/SIGTERM stop PostgreSQL
# (fast shutdown) and remove the data directory. As root it runs PostgreSQL as the `postgres` user.
set -eu
port=${1:?usage: scratch_postgres.sh PORT TABLES ROWS}
tables=${2:-4}
rows=${3:-10000}

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "scratch_postgres.sh: PostgreSQL is not installed (Debian package: postgresql)" >&2
    exit 1
fi
command -v sysbench >/dev/null || { echo "scratch_postgres.sh: sysbench not found (Debian package: sysbench)" >&2; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/perflab-scratch-pg.XXXXXX")
data="$dir/data"
as=""
if [ "$(id -u)" = 0 ]; then
    chmod 755 "$dir"
    mkdir "$data" && chown postgres "$data"
    as="runuser -u postgres --"
fi

pid=""
cleanup() {
    if [ -n "$pid" ]; then
        kill -INT "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    rm -rf "$dir"
}
trap 'cleanup; exit 0' INT TERM
trap cleanup EXIT

$as "$bin/initdb" -D "$data" -A trust -U postgres >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
# max_connections 120: the plan goes up to 64 sysbench threads (one connection each).
$as "$bin/postgres" -D "$data" -p "$port" -k "$data" -c listen_addresses=127.0.0.1 \
    -c max_connections=120 &
pid=$!

i=0
until "$bin/pg_isready" -q -h 127.0.0.1 -p "$port"; do
    i=$((i + 1))
    [ "$i" -le 100 ] || { echo "scratch_postgres.sh: PostgreSQL did not start" >&2; exit 1; }
    kill -0 "$pid" 2>/dev/null || { echo "scratch_postgres.sh: PostgreSQL exited" >&2; exit 1; }
    sleep 0.1
done

sysbench oltp_read_write --db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$port" \
    --pgsql-user=postgres --pgsql-db=postgres --tables="$tables" --table-size="$rows" \
    prepare >"$dir/prepare.log" 2>&1 || { cat "$dir/prepare.log" >&2; exit 1; }

echo "perflab-scratch-postgres ready on 127.0.0.1:$port ($tables tables x $rows rows)"
wait "$pid"
