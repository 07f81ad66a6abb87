#!/usr/bin/env bash
# perflab load net against iperf3 on loopback, alternating, R rounds: TCP stream with 1 and with 4
# streams, UDP at 1 Gbit/s with 1400-byte datagrams (the goal's) and at 100 Mbit/s (udp100: a rate
# neither receiver should drop at, so the two accountings are compared apart from CPU starvation).
# Prints each tool's median (and range) and the
# ratios perflab / iperf3, and the CPU per byte of each (client + server, from their own
# /proc/PID/stat and the client's rusage), in CPU-seconds per GB moved.
#
#   bench/net_vs_iperf3.sh                 # 10 s per run, 5 rounds
#   bench/net_vs_iperf3.sh --duration 5    # shorter runs
#   options: --rounds R (default 5), --duration S (default 10), --only "udp udp100" (a subset of
#   the tests tcp1 tcp4 udp udp100)
#
# "ratio" is the ratio of the medians (the goal's figure), "paired" the median of each round's own
# ratio (its two runs back to back).
# Goal: TCP >= 0.95 x iperf3 at 1 and at 4 streams at no more CPU per byte; UDP received rate
# within 2 % of iperf3's and loss within 1 point of it. Both servers run for the whole script
# (started here, stopped by PID at the end); the order of the two tools alternates each round.
# On a 2-CPU machine client and server share the CPUs with whatever else runs: loopback numbers
# measure CPU and memory copy, not a NIC.
set -euo pipefail

ROUNDS=5 DUR=10 TESTS="tcp1 tcp4 udp udp100"
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) ROUNDS="$2"; shift ;;
        --duration) DUR="$2"; shift ;;
        --only) TESTS="$2"; shift ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "net_vs_iperf3.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PERFLAB="$ROOT/target/release/perflab"
[ -x "$PERFLAB" ] || (cd "$ROOT" && cargo build --release -q)
command -v iperf3 >/dev/null || { echo "net_vs_iperf3.sh: iperf3 is not installed (apt-get install iperf3)" >&2; exit 2; }
command -v jq >/dev/null || { echo "net_vs_iperf3.sh: jq is not installed" >&2; exit 2; }
TMP=$(mktemp -d)
SRV_PL="" SRV_IP=""
cleanup() {
    [ -n "$SRV_PL" ] && kill "$SRV_PL" 2>/dev/null || true
    [ -n "$SRV_IP" ] && kill "$SRV_IP" 2>/dev/null || true
    rm -rf "$TMP"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
"$PERFLAB" serve --port 0 --net 0 >"$TMP/pl.out" 2>&1 &
SRV_PL=$!
for _ in $(seq 50); do grep -q '^serving net on' "$TMP/pl.out" && break; sleep 0.1; done
PL_ADDR=$(sed -n 's/^serving net on //p' "$TMP/pl.out")
IP_PORT=$(free_port)
iperf3 -s -B 127.0.0.1 -p "$IP_PORT" >/dev/null 2>&1 &
SRV_IP=$!
sleep 0.5

# CPU seconds (user + system) of a running process.
proc_cpu() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }
# run_timed OUT CMD...: run CMD, its stdout to OUT; prints the client's CPU seconds (rusage).
run_timed() {
    local out="$1"; shift
    /usr/bin/time -f '%U %S' -o "$TMP/time" "$@" >"$out" 2>/dev/null || true
    awk '{ print $1 + $2 }' "$TMP/time"
}

# One run: prints "gbit loss cpu_s_per_gb" (loss "-" for TCP).
run_one() {
    local tool="$1" test="$2" s0 c s1 gbit bytes loss
    case "$tool" in
        perflab) s0=$(proc_cpu "$SRV_PL") ;;
        iperf3) s0=$(proc_cpu "$SRV_IP") ;;
    esac
    case "$tool/$test" in
        perflab/tcp1) c=$(run_timed "$TMP/o" "$PERFLAB" load net "$PL_ADDR" -P 1 -d "${DUR}s" --json -q) ;;
        perflab/tcp4) c=$(run_timed "$TMP/o" "$PERFLAB" load net "$PL_ADDR" -P 4 -d "${DUR}s" --json -q) ;;
        perflab/udp) c=$(run_timed "$TMP/o" "$PERFLAB" load net "$PL_ADDR" -m udp -b 1G -l 1400 -d "${DUR}s" --json -q) ;;
        perflab/udp100) c=$(run_timed "$TMP/o" "$PERFLAB" load net "$PL_ADDR" -m udp -b 100M -l 1400 -d "${DUR}s" --json -q) ;;
        iperf3/tcp1) c=$(run_timed "$TMP/o" iperf3 -c 127.0.0.1 -p "$IP_PORT" -t "$DUR" -J) ;;
        iperf3/tcp4) c=$(run_timed "$TMP/o" iperf3 -c 127.0.0.1 -p "$IP_PORT" -t "$DUR" -P 4 -J) ;;
        iperf3/udp) c=$(run_timed "$TMP/o" iperf3 -c 127.0.0.1 -p "$IP_PORT" -t "$DUR" -u -b 1G -l 1400 -J) ;;
        iperf3/udp100) c=$(run_timed "$TMP/o" iperf3 -c 127.0.0.1 -p "$IP_PORT" -t "$DUR" -u -b 100M -l 1400 -J) ;;
    esac
    case "$tool" in
        perflab) s1=$(proc_cpu "$SRV_PL") ;;
        iperf3) s1=$(proc_cpu "$SRV_IP"); sleep 0.3 ;;
    esac
    case "$tool/$test" in
        perflab/tcp*) gbit=$(jq '.result.stream.gbit_per_s' "$TMP/o"); bytes=$(jq '.result.stream.bytes' "$TMP/o"); loss="-" ;;
        perflab/udp*) gbit=$(jq '.result.udp.received_gbit_per_s' "$TMP/o"); bytes=$(jq '.result.udp.bytes_received' "$TMP/o"); loss=$(jq '.result.udp.loss_pct * 100 | round / 100' "$TMP/o") ;;
        iperf3/tcp*) gbit=$(jq '.end.sum_received.bits_per_second / 1e9' "$TMP/o"); bytes=$(jq '.end.sum_received.bytes' "$TMP/o"); loss="-" ;;
        iperf3/udp*) gbit=$(jq '.end.sum_received.bits_per_second / 1e9' "$TMP/o"); bytes=$(jq '.end.sum_received.bytes' "$TMP/o"); loss=$(jq '.end.sum.lost_percent * 100 | round / 100' "$TMP/o") ;;
    esac
    awk -v g="$gbit" -v b="$bytes" -v l="$loss" -v c="$c" -v s0="$s0" -v s1="$s1" \
        'BEGIN { printf "%.3f %s %.4f\n", g, l, (b > 0 ? (c + s1 - s0) / (b / 1e9) : 0) }'
}

echo "perflab load net vs iperf3 $(iperf3 --version | head -1 | awk '{print $2}') — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, loopback, ${DUR}s runs, $ROUNDS rounds, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
    for test in $TESTS; do
        if [ $((r % 2)) -eq 1 ]; then order="perflab iperf3"; else order="iperf3 perflab"; fi
        for tool in $order; do
            line=$(run_one "$tool" "$test")
            echo "$test $tool $line $r" >>"$TMP/results"
            printf '  round %d %-5s %-8s %s\n' "$r" "$test" "$tool" "$line"
        done
    done
done

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
range() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s..%s", lo, hi }'; }
col() { awk -v t="$1" -v o="$2" -v c="$3" '$1 == t && $2 == o { print $c }' "$TMP/results"; }
echo
# The median of the rounds' own ratios (each round's two runs back to back), beside the ratio of
# the medians: when the two agree, drift of the machine's load did not decide the figure.
paired() { awk -v t="$1" '$1 == t && $2 == "perflab" { p[$6] = $3 } $1 == t && $2 == "iperf3" { i[$6] = $3 }
    END { for (r in p) if (i[r] > 0) print p[r] / i[r] }' "$TMP/results" | median; }
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-28s %-28s %-8s %-8s %s\n' test "perflab Gbit/s [range]" "iperf3 Gbit/s [range]" ratio paired "CPU-s/GB perflab / iperf3"
for test in $TESTS; do
    pg=$(col "$test" perflab 3 | median); ig=$(col "$test" iperf3 3 | median)
    pc=$(col "$test" perflab 5 | median); ic=$(col "$test" iperf3 5 | median)
    printf '%-6s %-28s %-28s %-8s %-8s %s\n' "$test" "$pg [$(col "$test" perflab 3 | range)]" "$ig [$(col "$test" iperf3 3 | range)]" \
        "$(awk -v a="$pg" -v b="$ig" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')" "$(printf '%.3f' "$(paired "$test")")" \
        "$pc / $ic ($(awk -v a="$pc" -v b="$ic" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }') x)"
done
for test in $TESTS; do
    case $test in udp*) ;; *) continue ;; esac
    pl=$(col $test perflab 4 | median); il=$(col $test iperf3 4 | median)
    echo "$test loss %: perflab $pl [$(col $test perflab 4 | range)], iperf3 $il [$(col $test iperf3 4 | range)], difference $(awk -v a="$pl" -v b="$il" 'BEGIN { printf "%.2f", a - b }') points"
done
