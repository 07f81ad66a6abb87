#!/usr/bin/env bash
# perflab's OLTP clients (PostgreSQL and MariaDB backends) against sysbench 1.0, on the same scratch
# servers and the same tables (4 x 10 000 rows): read_only and read_write at 1, 2, 4 and 8 threads,
# 10 s each, the two clients alternating, 3 rounds. Prints per cell the median TPS of each, the TPS
# ratio (goal >= 1.0) and the ratio of client CPU per transaction (goal <= 0.7).
#
#   bench/oltp_vs_sysbench.sh            # full: 3 rounds x 10 s, threads 1 2 4 8
#   bench/oltp_vs_sysbench.sh --quick    # smoke test: 1 round x 3 s, threads 1 4
#   options: --db pg|mariadb|both (default both)
#            --threads "2 8": only these thread counts; --rounds N: N rounds (default 3)
#            --baseline BIN: another perflab binary (an older build) as a third client in every
#            round, on the same servers; the summary adds perflab / baseline
#            --tls: the servers with TLS on (a test CA and certificate made here with openssl);
#            perflab with sslmode=require / ssl-mode=REQUIRED, sysbench with PGSSLMODE=require /
#            --mysql-ssl=on, pgbench with PGSSLMODE=require
#
# On PostgreSQL a third scenario, point_select (one primary-key SELECT per transaction), also runs
# pgbench's select-only test (`pgbench -n -S -M prepared -c N -j N -T DUR`: prepared statements, as
# perflab and sysbench use, on its own pgbench_accounts table of 100 000 rows made by `pgbench -i`),
# the PostgreSQL project's own client, as a second anchor: the summary gives perflab / pgbench too.
#
# The servers (PostgreSQL 127.0.0.1, MariaDB 127.0.0.1, each on a scratch data directory and a free
# port, fsync off / flush at commit 2 so the disk of this VM is not what is measured) are started by
# this script and stopped on exit (EXIT, INT, TERM). The perflab side is what users run:
# `perflab load oltp --db URL -s SCENARIO --tables 4 --table-size 10000 -t N -d 10s --warmup 0s
# --prepare never --json` (its own prepare loads the tables once per server, not measured), one
# thread and one connection per client thread, closed loop; sysbench runs `oltp_read_only` /
# `oltp_read_write` with the same tables and threads. Both draw ids uniformly
# (`--rand-type=uniform`). TPS is each tool's own committed transactions over its own measured
# seconds; client CPU is user + sys of the client process from /usr/bin/time (start-up included
# for both), divided by those transactions.
set -euo pipefail

ROUNDS=3 DUR=10 THREADS=(1 2 4 8) DBS="pg mariadb" TLS="" BASE=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) ROUNDS=1 DUR=3 THREADS=(1 4) ;;
        --tls) TLS=1 ;;
        --threads) read -r -a THREADS <<< "$2"; shift ;;
        --rounds) ROUNDS="$2"; shift ;;
        --baseline) BASE="$(readlink -f "$2")"; shift; [ -x "$BASE" ] || { echo "--baseline: no executable $BASE" >&2; exit 2; } ;;
        --db) case "$2" in pg) DBS=pg ;; mariadb) DBS=mariadb ;; both) ;; *) echo "--db pg|mariadb|both" >&2; exit 2 ;; esac; shift ;;
        -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
        *) echo "oltp_vs_sysbench.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
command -v sysbench >/dev/null || { echo "sysbench is not installed (apt-get install sysbench)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is not installed (apt-get install time)" >&2; exit 2; }
PGBIN="$(dirname "$(readlink -f "$(command -v initdb || echo /usr/local/bin/initdb)")")"
[ -x "$PGBIN/postgres" ] || PGBIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"

command -v python3 >/dev/null || { echo "python3 is needed to read perflab's JSON" >&2; exit 2; }
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
echo "building perflab (release)"
(cd "$ROOT" && nice -n 10 cargo build --release --bin perflab --quiet) || { echo "could not build perflab" >&2; exit 1; }
PERFLAB="$ROOT/target/release/perflab"

T="$(mktemp -d /tmp/perflab-oltp-bench.XXXXXX)"
chmod 755 "$T"
PG_STARTED="" MY_PID=""
cleanup() {
    if [ -n "$PG_STARTED" ]; then
        $ASPG "$PGBIN/pg_ctl" -D "$T/pg" -m fast -w stop >/dev/null 2>&1 || true
    fi
    if [ -n "$MY_PID" ]; then
        kill "$MY_PID" 2>/dev/null || true
        wait "$MY_PID" 2>/dev/null || true
    fi
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PG_TLS="" MY_TLS=()
if [ -n "$TLS" ]; then
    command -v openssl >/dev/null || { echo "--tls needs openssl" >&2; exit 2; }
    mkdir -p "$T/tls"
    (cd "$T/tls" &&
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem \
            -days 2 -subj "/CN=perflab bench CA" -addext basicConstraints=critical,CA:TRUE 2>/dev/null &&
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out server.csr \
            -subj /CN=localhost 2>/dev/null &&
        printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >server.ext &&
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.crt -days 2 \
            -extfile server.ext 2>/dev/null &&
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout client-key.pem \
            -out client.csr -subj /CN=sb 2>/dev/null &&
        openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client-cert.pem \
            -days 2 2>/dev/null && cp ca.pem cacert.pem) ||
        { echo "could not make the test certificates" >&2; exit 1; }
    chmod 755 "$T/tls"; chmod 644 "$T/tls/"*
    [ "$(id -u)" -ne 0 ] || chown postgres: "$T/tls/server.key"
    chmod 600 "$T/tls/server.key"
    PG_TLS="-c ssl=on -c ssl_cert_file=$T/tls/server.crt -c ssl_key_file=$T/tls/server.key"
    MY_TLS=(--ssl-cert="$T/tls/server.crt" --ssl-key="$T/tls/server.key" --ssl-ca="$T/tls/ca.pem")
fi

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

ASPG=""
if [ "$(id -u)" -eq 0 ]; then ASPG="runuser -u postgres --"; fi

start_pg() {
    mkdir -p "$T/pg"
    [ -z "$ASPG" ] || chown postgres: "$T/pg"
    $ASPG "$PGBIN/initdb" -D "$T/pg" -A trust -U postgres -E UTF8 --locale=C --no-sync >/dev/null
    PG_PORT="$(free_port)"
    $ASPG "$PGBIN/pg_ctl" -D "$T/pg" -l "$T/pg/server.log" -w -o "-p $PG_PORT -c listen_addresses=127.0.0.1 \
        -c unix_socket_directories=$T/pg -c max_connections=100 -c fsync=off -c synchronous_commit=off \
        -c shared_buffers=128MB $PG_TLS" start >/dev/null
    PG_STARTED=1
    psql -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -c "CREATE DATABASE sbtest"
}

start_mariadb() {
    mkdir -p "$T/my"
    local user=(); [ "$(id -u)" -ne 0 ] || user=(--user=root)
    mariadb-install-db --no-defaults --datadir="$T/my/data" --auth-root-authentication-method=normal \
        --skip-test-db "${user[@]}" >"$T/my/install.log" 2>&1
    MY_PORT="$(free_port)"
    mariadbd --no-defaults --datadir="$T/my/data" --socket="$T/my/sock" --port="$MY_PORT" \
        --bind-address=127.0.0.1 --skip-name-resolve --skip-log-bin --max-connections=100 \
        --innodb-buffer-pool-size=256M --innodb-flush-log-at-trx-commit=2 --log-error="$T/my/err.log" \
        "${MY_TLS[@]}" "${user[@]}" >/dev/null 2>&1 &
    MY_PID=$!
    for _ in $(seq 1 150); do
        mariadb --no-defaults -h 127.0.0.1 -P "$MY_PORT" -u root -e "SELECT 1" >/dev/null 2>&1 && break
        sleep 0.2
    done
    mariadb --no-defaults -h 127.0.0.1 -P "$MY_PORT" -u root \
        -e "CREATE DATABASE sbtest; CREATE USER sb@'%'; GRANT ALL ON sbtest.* TO sb@'%'"
}

perflab_load() { # url scenario threads [more args...]
    local url=$1 scen=$2 thr=$3
    shift 3
    "$PERFLAB" load oltp --db "$url" -s "$scen" --tables 4 --table-size 10000 -t "$thr" --rand-type uniform "$@"
}

OUT="$T/results"
: >"$OUT"
measure() { # db tool scenario threads round
    local db=$1 tool=$2 scen=$3 thr=$4 round=$5 log="$T/run.log" tx secs
    if [ "$tool" = perflab ] || [ "$tool" = baseline ]; then
        local bin="$PERFLAB"
        [ "$tool" = perflab ] || bin="$BASE"
        /usr/bin/time -f "%U %S" -o "$T/time" "$bin" load oltp --db "$URL" -s "$scen" --tables 4 \
            --table-size 10000 -t "$thr" --rand-type uniform -d "${DUR}s" --warmup 0s --prepare never \
            --json --quiet >"$log" 2>&1 || true
        read -r tx secs < <(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(r["transactions"], r["measured_s"])' "$log" 2>/dev/null) || true
    elif [ "$tool" = pgbench ]; then
        /usr/bin/time -f "%U %S" -o "$T/time" env "${SB_ENV[@]}" pgbench -n -S -M prepared -c "$thr" -j "$thr" -T "$DUR" \
            -h 127.0.0.1 -p "$PG_PORT" -U postgres sbtest >"$log" 2>&1 || true
        tx="$(awk -F': ' '/number of transactions actually processed/{split($2, a, "/"); print a[1]}' "$log")"
        secs="$(awk '/^duration:/{print $2}' "$log")"
    else
        # (sysbench 1.0's --mysql-ssl=on reads client-key.pem, client-cert.pem and cacert.pem from
        # its working directory)
        (cd "${SB_DIR:-.}" && /usr/bin/time -f "%U %S" -o "$T/time" env "${SB_ENV[@]}" sysbench "oltp_$scen" \
            "${SB_ARGS[@]}" --tables=4 --table-size=10000 --threads="$thr" --time="$DUR" --rand-type=uniform \
            run >"$log" 2>&1)
        tx="$(awk '/transactions:/{print $2}' "$log")"
        secs="$(awk '/total time:/{sub("s","",$3); print $3}' "$log")"
    fi
    if [ -z "$tx" ] || [ -z "$secs" ]; then
        echo "$tool $db $scen $thr: no result:" >&2; tail -5 "$log" >&2; exit 1
    fi
    read -r u s <"$T/time"
    echo "$db $scen $thr $tool $round $tx $secs $u $s" >>"$OUT"
    printf '  %-8s %-7s %-10s %2s thr  %8.1f tps  %7.1f us CPU/tx\n' "$db" "$tool" "$scen" "$thr" \
        "$(echo "$tx $secs" | awk '{print $1/$2}')" "$(echo "$u $s $tx" | awk '{print ($1+$2)*1e6/$3}')"
}

for db in $DBS; do
    if [ "$db" = pg ]; then
        start_pg
        URL="postgres://postgres@127.0.0.1:$PG_PORT/sbtest"
        SB_ARGS=(--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port="$PG_PORT" --pgsql-user=postgres --pgsql-db=sbtest)
        SB_ENV=(PGSSLMODE=disable)
        if [ -n "$TLS" ]; then URL="$URL?sslmode=require"; SB_ENV=(PGSSLMODE=require); fi
    else
        start_mariadb
        URL="mysql://sb@127.0.0.1:$MY_PORT/sbtest"
        SB_ARGS=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$MY_PORT" --mysql-user=sb --mysql-db=sbtest
            --mysql-ignore-errors=1062,1213,1205,1020)
        SB_ENV=(SB_TLS=off)
        if [ -n "$TLS" ]; then URL="$URL?ssl-mode=REQUIRED"; SB_ARGS+=(--mysql-ssl=on); SB_DIR="$T/tls"; fi
    fi
    echo "$db: loading 4 x 10 000 rows (perflab's prepare)"
    perflab_load "$URL" read_only 1 --prepare always --prepare-only --quiet >"$T/prepare.log" 2>&1 ||
        { cat "$T/prepare.log" >&2; exit 1; }
    scenarios="read_only read_write"
    if [ "$db" = pg ] && command -v pgbench >/dev/null; then
        env "${SB_ENV[@]}" pgbench -i -q -s 1 -h 127.0.0.1 -p "$PG_PORT" -U postgres sbtest >"$T/pgbench-init.log" 2>&1 ||
            { cat "$T/pgbench-init.log" >&2; exit 1; }
        scenarios="$scenarios point_select"
    fi
    for scen in $scenarios; do
        for thr in "${THREADS[@]}"; do
            for round in $(seq 1 "$ROUNDS"); do
                if [ $((round % 2)) -eq 1 ]; then order="perflab sysbench"; else order="sysbench perflab"; fi
                [ "$scen" != point_select ] || order="$order pgbench"
                if [ -n "$BASE" ]; then
                    if [ $((round % 2)) -eq 1 ]; then order="${order/perflab/perflab baseline}"; else order="${order/perflab/baseline perflab}"; fi
                fi
                for tool in $order; do measure "$db" "$tool" "$scen" "$thr" "$round"; done
            done
        done
    done
done

echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
echo "medians over $ROUNDS round(s) of ${DUR} s${TLS:+, TLS on} (perflab / sysbench; goals: TPS >= 1.0, CPU/tx <= 0.7${TLS:+ (0.9 with TLS)})"
awk '
    { key = $1 " " $2 " " $3; tps[key, $4, ++n[key, $4]] = $6 / $7; cpu[key, $4, n[key, $4]] = ($8 + $9) * 1e6 / $6
      if (!(key in seen)) { seen[key] = 1; order[++k] = key } }
    function median(arr, key, tool, cnt,   i, j, t, v) {
        for (i = 1; i <= cnt; i++) v[i] = arr[key, tool, i]
        for (i = 1; i <= cnt; i++) for (j = i + 1; j <= cnt; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        return cnt % 2 ? v[(cnt + 1) / 2] : (v[cnt / 2] + v[cnt / 2 + 1]) / 2
    }
    # perflab against `tool` in every cell that has it, under `title` (none: the first table)
    function against(tool, title, short,   i, key, f, head, tp, ta, cp, ca) {
        for (i = 1; i <= k; i++) {
            key = order[i]; split(key, f, " ")
            if (!n[key, tool]) continue
            if (!head++) {
                if (title != "") printf "\n%s\n", title
                printf "%-8s %-10s %3s  %10s %10s %6s  %10s %10s %6s\n", "db", "scenario", "thr", "perflab", tool, "TPS x", "us/tx pl", "us/tx " short, "CPU x"
            }
            tp = median(tps, key, "perflab", n[key, "perflab"]); ta = median(tps, key, tool, n[key, tool])
            cp = median(cpu, key, "perflab", n[key, "perflab"]); ca = median(cpu, key, tool, n[key, tool])
            printf "%-8s %-10s %3s  %10.1f %10.1f %6.2f  %10.1f %10.1f %6.2f\n", f[1], f[2], f[3], tp, ta, tp / ta, cp, ca, cp / ca
        }
    }
    END {
        against("sysbench", "", "sb")
        against("pgbench", "perflab / pgbench -S (point_select)", "pg")
        against("baseline", "perflab / baseline (another perflab build)", "bl")
    }' "$OUT"
