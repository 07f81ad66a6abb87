#!/usr/bin/env bash
# perflab load mem bandwidth (1 worker) against stress-ng --stream 1 and sysbench memory with 256M
# blocks (read and write, 1 thread), side by side; the goal: perflab's read rate at least 0.95 x each.
#
#   bench/mem_bandwidth.sh            # 3 repetitions x 10 s, medians
#   bench/mem_bandwidth.sh --quick    # 1 repetition
#
# Rates in MiB/s (2^20 bytes/s): stress-ng's stream "MB" is 2^20 bytes; sysbench prints MiB/sec.
# perflab's read rate is the bytes its STREAM kernels read over every timed kernel (as stress-ng's),
# its best-of-N copy and triad rates are printed beside it. Missing packages are installed with apt-get.
set -euo pipefail

REPS=3 DUR=10
case "${1:-}" in
    --quick) REPS=1 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
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

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A V
for rep in $(seq "$REPS"); do
    "$PERFLAB" load mem bandwidth -w 1 -d "${DUR}s" --warmup 1s -q --json >"$T/p.json"
    V[p_read]+="$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["bandwidth"]["read_mib_per_s"])' "$T/p.json") "
    V[p_copy]+="$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["bandwidth"]["best_mib_per_s"]["copy"])' "$T/p.json") "
    V[p_triad]+="$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["bandwidth"]["best_mib_per_s"]["triad"])' "$T/p.json") "
    stress-ng --stream 1 --timeout "${DUR}s" --metrics-brief --yaml "$T/s.yaml" >/dev/null 2>&1 || true
    V[s_read]+="$(awk '/memory-read-rate-mb-per-sec/ { print $2 }' "$T/s.yaml" | head -1) "
    sysbench memory --memory-block-size=256M --memory-total-size=100T --memory-oper=read --threads=1 --time="$DUR" run >"$T/sb.txt" 2>&1 || true
    V[sb_read]+="$(awk -F'[( ]+' '/MiB transferred/ { for (i = 1; i <= NF; i++) if ($i ~ /MiB\/sec/) print $(i - 1) }' "$T/sb.txt" | head -1) "
    echo "repetition $rep: perflab read ${V[p_read]##* }, stress-ng read ${V[s_read]##* }, sysbench read ${V[sb_read]##* }" | tr -s ' '
done
med() { tr ' ' '\n' <<<"${V[$1]}" | sed '/^$/d' | median; }
echo
echo "perflab load mem bandwidth vs stress-ng --stream 1 vs sysbench memory 256M read — $(date -u '+%Y-%m-%d %H:%M UTC'), medians of $REPS x ${DUR}s"
printf '| %-40s | %12s |\n' "figure" "MiB/s"
printf '|%s|%s|\n' "------------------------------------------" "--------------"
printf '| %-40s | %12.0f |\n' "perflab read (all timed kernels)" "$(med p_read)"
printf '| %-40s | %12.0f |\n' "perflab copy, best of N (STREAM)" "$(med p_copy)"
printf '| %-40s | %12.0f |\n' "perflab triad, best of N (STREAM)" "$(med p_triad)"
printf '| %-40s | %12.0f |\n' "stress-ng --stream 1 read" "$(med s_read)"
printf '| %-40s | %12.0f |\n' "sysbench memory 256M block read" "$(med sb_read)"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
echo
echo "goal: perflab read >= 0.95 x stress-ng read: $(ratio "$(med p_read)" "$(med s_read)") x"
echo "goal: perflab read >= 0.95 x sysbench read:  $(ratio "$(med p_read)" "$(med sb_read)") x"
