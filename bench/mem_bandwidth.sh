#!/usr/bin/env bash
# perflab load mem bandwidth against sysbench memory and stress-ng --stream, like for like, the
# tools alternating (the order swaps each round), medians of the rounds and their ratios:
#   - read:   perflab --method read  -s 256M -w 1   vs  sysbench memory --memory-oper=read  256M block, 1 thread
#   - write:  perflab --method write -s 256M -w 1   vs  sysbench memory --memory-oper=write 256M block, 1 thread
#   - stream: perflab --method stream -w 1 (its read figure over every timed kernel) vs stress-ng --stream 1
# Both sides run the same time; sysbench and perflab read (or write) one 256 MiB block per thread
# from start to end, a pass at a time, and count passes x 256 MiB over the time taken.
# The goal: perflab read >= 0.95 x sysbench read.
#
#   bench/mem_bandwidth.sh              # 5 rounds x 10 s
#   bench/mem_bandwidth.sh --quick      # 1 round x 3 s
#   ROUNDS=3 DUR=5 bench/mem_bandwidth.sh
#
# Rates in MiB/s (2^20 bytes/s): stress-ng's stream "MB" is 2^20 bytes; sysbench prints MiB/sec.
# Missing packages are installed with apt-get.
set -euo pipefail

ROUNDS="${ROUNDS:-5}" DUR="${DUR:-10}"
case "${1:-}" in
    --quick) ROUNDS=1 DUR=3 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    "") ;;
    *) echo "mem_bandwidth.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PERFLAB="$ROOT/target/release/perflab"
[ -x "$PERFLAB" ] || (cd "$ROOT" && cargo build --release -q)
need=()
command -v stress-ng >/dev/null || need+=(stress-ng)
command -v sysbench >/dev/null || need+=(sysbench)
if [ ${#need[@]} -gt 0 ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get -y -q install "${need[@]}" >/dev/null
fi
T="$(mktemp -d /tmp/perflab-membw.XXXXXX)"
trap 'rm -rf "$T"' EXIT

# One run: prints MiB/s. $1: perflab-read|perflab-write|perflab-stream|sysbench-read|sysbench-write|stress-ng
run_one() {
    case "$1" in
        perflab-read|perflab-write)
            "$PERFLAB" load mem bandwidth --method "${1#perflab-}" -s 256M -w 1 -d "${DUR}s" --warmup 1s -q --json >"$T/p.json"
            jq ".bandwidth.${1#perflab-}_mib_per_s" "$T/p.json" ;;
        perflab-stream)
            "$PERFLAB" load mem bandwidth --method stream -w 1 -d "${DUR}s" --warmup 1s -q --json >"$T/p.json"
            jq '.bandwidth.read_mib_per_s' "$T/p.json" ;;
        sysbench-read|sysbench-write)
            sysbench memory --memory-block-size=256M --memory-total-size=100T --memory-oper="${1#sysbench-}" \
                --threads=1 --time="$DUR" run >"$T/sb.txt" 2>&1 || true
            awk -F'[( ]+' '/MiB transferred/ { for (i = 1; i <= NF; i++) if ($i ~ /MiB\/sec/) print $(i - 1) }' "$T/sb.txt" | head -1 ;;
        stress-ng)
            stress-ng --stream 1 --timeout "${DUR}s" --metrics-brief --yaml "$T/s.yaml" >/dev/null 2>&1 || true
            awk '/memory-read-rate-mb-per-sec/ { print $2 }' "$T/s.yaml" | head -1 ;;
    esac
}

PAIRS="read perflab-read sysbench-read
write perflab-write sysbench-write
stream perflab-stream stress-ng"
echo "perflab load mem bandwidth vs sysbench memory (256M block) and stress-ng --stream — $(date -u '+%Y-%m-%d %H:%M UTC'), $ROUNDS round(s) x ${DUR}s, 1 thread, alternating"
for r in $(seq "$ROUNDS"); do
    while read -r test a b; do
        if [ $((r % 2)) -eq 1 ]; then order="$a $b"; else order="$b $a"; fi
        for tool in $order; do
            v=$(run_one "$tool")
            echo "$test $tool ${v:-0}" >>"$T/results"
            printf '  round %d %-6s %-15s %10.0f MiB/s\n' "$r" "$test" "$tool" "${v:-0}"
        done
    done <<<"$PAIRS"
done

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
range() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.0f..%.0f", lo, hi }'; }
col() { awk -v t="$1" -v o="$2" '$1 == t && $2 == o { print $3 }' "$T/results"; }
echo
printf '| %-6s | %-32s | %-32s | %6s |\n' test "perflab MiB/s median [range]" "anchor MiB/s median [range]" ratio
printf '|%s|%s|%s|%s|\n' "--------" "----------------------------------" "----------------------------------" "--------"
while read -r test a b; do
    pa=$(col "$test" "$a" | median) pb=$(col "$test" "$b" | median)
    printf '| %-6s | %-32s | %-32s | %6s |\n' "$test" "$(printf '%.0f' "$pa") [$(col "$test" "$a" | range)]" \
        "$b $(printf '%.0f' "$pb") [$(col "$test" "$b" | range)]" \
        "$(awk -v a="$pa" -v b="$pb" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
done <<<"$PAIRS"
echo
echo "goal: perflab read >= 0.95 x sysbench read (ratio of medians, the read row)"
