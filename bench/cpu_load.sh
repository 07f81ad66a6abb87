#!/usr/bin/env bash
# perflab load cpu against stress-ng --cpu-load at 10, 25, 50, 75 and 90 %: each one's whole-machine
# busy % in /proc/stat over its load phase, and its error against the load asked.
#
#   bench/cpu_load.sh              # 2 workers (one per CPU of a 2-CPU machine), 8 s per cell
#   bench/cpu_load.sh --quick      # 4 s per cell
#   options: --workers N (default: nproc), --max-busy P (wait, at most 2 min, until the machine is
#            less than P % busy over 2 s before each cell; default 5)
#
# Each tool runs 1.5 s longer than the window /proc/stat is read over, and the window starts 1.5 s
# after the tool does (stress-ng needs time to settle; perflab's warm-up is 1 s), so both are read
# over their steady state. The background (other processes) is read over 2 s before each cell and
# printed beside it: an idle machine shows 0 to 1 %. stress-ng is installed with apt-get when missing.
set -euo pipefail

WORKERS=$(nproc) DUR=8 MAX_BUSY=5
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) DUR=4 ;;
        --workers) WORKERS="$2"; shift ;;
        --max-busy) MAX_BUSY="$2"; shift ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) echo "cpu_load.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PERFLAB="$ROOT/target/release/perflab"
[ -x "$PERFLAB" ] || (cd "$ROOT" && cargo build --release -q)
if ! command -v stress-ng >/dev/null; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get -y -q install stress-ng >/dev/null
fi

stat() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); u = y[1] - x[1]; i = y[2] - x[2]; printf "%.1f", (u + i > 0 ? 100 * u / (u + i) : 0) }'; }
busy_over() { local a; a=$(stat); sleep "$1"; pct "$a" "$(stat)"; }
wait_quiet() {
    local waited=0 b
    b=$(busy_over 2)
    while awk -v b="$b" -v m="$MAX_BUSY" 'BEGIN { exit !(b >= m) }'; do
        [ $waited -ge 120 ] && break
        sleep 3; waited=$((waited + 5)); b=$(busy_over 2)
    done
    echo "$b"
}

# run_cell CMD...: /proc/stat busy % over the steady window of the command.
run_cell() {
    "$@" >/dev/null 2>&1 &
    local pid=$! a
    sleep 1.5
    a=$(stat)
    sleep "$DUR"
    local b; b=$(stat)
    wait "$pid" || true
    pct "$a" "$b"
}

echo "perflab load cpu vs stress-ng --cpu-load — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $WORKERS workers, ${DUR}s windows"
echo "stress-ng $(stress-ng --version 2>&1 | awk '{ print $3 }'), perflab $($PERFLAB --version | awk '{ print $2 }')"
echo
want_machine() { awk -v l="$1" -v w="$WORKERS" -v n="$(nproc)" 'BEGIN { printf "%.1f", l * w / n }'; }
printf '| %-6s | %-10s | %-22s | %-22s | %-10s |\n' "load" "expected" "perflab (error)" "stress-ng (error)" "background"
printf '|%s|%s|%s|%s|%s|\n' "--------" "------------" "------------------------" "------------------------" "------------"
for load in 10 25 50 75 90; do
    want=$(want_machine "$load")
    bg=$(wait_quiet)
    p=$(run_cell "$PERFLAB" load cpu -w "$WORKERS" -l "$load" --warmup 1s -d "$(awk -v d="$DUR" 'BEGIN { print d + 1 }')s" -q)
    bg2=$(wait_quiet)
    s=$(run_cell stress-ng --cpu "$WORKERS" --cpu-load "$load" --timeout "$(awk -v d="$DUR" 'BEGIN { print int(d + 3) }')s")
    err() { awk -v a="$1" -v w="$want" 'BEGIN { printf "%+.1f", a - w }'; }
    printf '| %-6s | %-10s | %-22s | %-22s | %-10s |\n' "$load %" "$want %" "$p % ($(err "$p"))" "$s % ($(err "$s"))" "$bg / $bg2 %"
done
echo
echo "expected: load x workers / CPUs of the whole machine; error: measured - expected (percentage points)"
