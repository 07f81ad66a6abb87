#!/usr/bin/env bash
# Where the client's time goes per request, for perflab http (epoll and io_uring engines), wrk and
# ab -k, against the same nginx as bench/http_vs_peers.sh (800-byte file, keep-alive):
#   - user and kernel CPU µs per request of the client process (/usr/bin/time),
#   - system calls per request (perf stat -e raw_syscalls:sys_enter, all the client's threads),
#   - wake-ups per request (voluntary context switches: each is a sleep the client woke from),
#   - involuntary context switches per request (the client preempted, e.g. by nginx).
# Then one strace -c -f run per client over a fixed number of requests (the syscall mix; strace
# slows the client down, so only its counts are used, not its times).
#
#   bench/http_cost.sh                # c = 10/50/100, 5 s per cell, one round
#   bench/http_cost.sh --rounds 3     # rounds alternate the clients' order; per-round lines, medians
#   options: --dur S (default 5), --port N, --no-strace
# Needs nginx, wrk, ab (apache2-utils), perf (linux-perf), strace, /usr/bin/time; run as root (the
# raw_syscalls tracepoint) or with perf_event_paranoid <= -1.
set -euo pipefail
ROUNDS=1 DUR=5 PORT="" STRACE=1
CS=(10 50 100)
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) ROUNDS="$2"; shift ;;
        --dur) DUR="$2"; shift ;;
        --port) PORT="$2"; shift ;;
        --no-strace) STRACE=0 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "http_cost.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PERFLAB="$ROOT/target/release/perflab"
for t in wrk ab perf strace nginx; do
    command -v $t >/dev/null || [ -x /usr/sbin/$t ] || { echo "http_cost.sh: $t is missing" >&2; exit 2; }
done
[ -x "$PERFLAB" ] || { echo "http_cost.sh: build perflab first (cargo build --release)" >&2; exit 2; }
# shellcheck source=bench/nginx.sh
. "$ROOT/bench/nginx.sh"
start_nginx 18180

TOOLS=(epoll wrk ab)
"$PERFLAB" http --engine uring -q -n 10 -c 1 "$URL" >/dev/null 2>&1 && TOOLS=(epoll uring wrk ab)

# cmd TOOL C: the client's command line, by duration.
cmd() {
    case $1 in
        epoll) echo "$PERFLAB http -q -c $2 -d ${DUR}s $URL" ;;
        uring) echo "$PERFLAB http --engine uring -q -c $2 -d ${DUR}s $URL" ;;
        wrk) echo "wrk -t2 -c$2 -d${DUR}s $URL" ;;
        ab) echo "ab -q -t $DUR -n 20000000 -c $2 -k $URL" ;;
    esac
}
count() {  # the completed requests in a client's output
    case $1 in
        wrk) awk '/requests in/ { print $1 }' "$2" ;;
        *) awk '/^Complete requests:/ { print $3 }' "$2" ;;
    esac
}
# one TOOL C: "req/s user_us sys_us syscalls wakeups preempted" per request
one() {
    local -a argv
    read -r -a argv <<<"$(cmd "$1" "$2")"
    perf stat -x, -o "$T/perf.txt" -e raw_syscalls:sys_enter -- \
        /usr/bin/time -f '%e %U %S %w %c' -o "$T/time.txt" "${argv[@]}" >"$T/out.txt" 2>&1 || true
    local n; n=$(count "$1" "$T/out.txt")
    [ -n "$n" ] && [ "$n" != 0 ] || { echo "0 0 0 0 0 0"; return; }
    local sc; sc=$(awk -F, '/raw_syscalls:sys_enter/ { print $1 }' "$T/perf.txt")
    read -r e u s w c < <(tail -1 "$T/time.txt")
    awk -v n="$n" -v e="$e" -v u="$u" -v s="$s" -v w="$w" -v c="$c" -v sc="$sc" \
        'BEGIN { printf "%.0f %.2f %.2f %.2f %.3f %.3f\n", n / e, u * 1e6 / n, s * 1e6 / n, sc / n, w / n, c / n }'
}
med() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "client cost per request — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(uname -r), nginx $("$NGINX" -v 2>&1 | sed 's/.*\///') (2 workers) at $URL (800 B)"
echo "at start: load $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A V
for r in $(seq "$ROUNDS"); do
    k=$(( (r - 1) % ${#TOOLS[@]} ))
    order=("${TOOLS[@]:k}" "${TOOLS[@]:0:k}")
    echo "round $r (load $(cut -d' ' -f1-3 /proc/loadavg))"
    for c in "${CS[@]}"; do
        for t in "${order[@]}"; do
            read -r -a f <<<"$(one "$t" "$c")"
            printf '  %-6s c=%-4s %8s req/s  user %6s us  sys %6s us  syscalls %6s  wake-ups %6s  preempted %6s\n' "$t" "$c" "${f[@]}"
            for i in 0 1 2 3 4 5; do V[$t,$c,$i]+="${f[$i]} "; done
            sleep 1
        done
    done
done
echo
echo "medians of $ROUNDS round(s) x ${DUR}s, per request"
printf '| %-6s | %-5s | %-8s | %-8s | %-8s | %-9s | %-8s | %-9s |\n' client c "req/s" "user us" "sys us" syscalls wake-ups preempted
printf '|%s|\n' "--------|-------|----------|----------|----------|-----------|----------|-----------"
for c in "${CS[@]}"; do
    for t in "${TOOLS[@]}"; do
        printf '| %-6s | %-5s |' "$t" "$c"
        for i in 0 1 2 3 4 5; do printf ' %-8s |' "$(med "${V[$t,$c,$i]}")"; done
        echo
    done
done

if [ "$STRACE" = 1 ]; then
    echo
    echo "system call mix (strace -c -f, 100 000 requests at c = 50; counts per request)"
    for t in "${TOOLS[@]}"; do
        case $t in
            epoll) a=("$PERFLAB" http -q -c 50 -n 100000 "$URL") ;;
            uring) a=("$PERFLAB" http --engine uring -q -c 50 -n 100000 "$URL") ;;
            wrk) a=(wrk -t2 -c50 -d3s "$URL") ;;
            ab) a=(ab -q -n 100000 -c 50 -k "$URL") ;;
        esac
        strace -c -f -o "$T/strace.txt" "${a[@]}" >"$T/out.txt" 2>&1 || true
        n=$(count "$t" "$T/out.txt")
        printf '  %-6s (%s requests):' "$t" "$n"
        awk -v n="$n" '$1 ~ /^[0-9.]+$/ && NF >= 5 { calls = $4; name = $NF; if (calls + 0 > 0 && calls / n >= 0.01) printf " %s %.2f", name, calls / n } END { print "" }' "$T/strace.txt"
    done
fi
echo "at end: load $(cut -d' ' -f1-3 /proc/loadavg)"
