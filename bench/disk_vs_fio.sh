#!/usr/bin/env bash
# perflab load disk against fio (io_uring engine) on the same file, the same jobs, alternating:
# 4 KiB randread at QD 1 and 32, 4 KiB randwrite at QD 32, 1 MiB sequential read and write; direct,
# one job, time-based; the two tools alternate and their order swaps each round. Prints per job
# the medians over the rounds and the ratios perflab / fio (ratios of the medians) of
# IOPS, lat p50 and p99 (fio's `lat`, submission to completion, with --lat_percentiles=1) and CPU per
# I/O (fio: (usr_cpu + sys_cpu) x job_runtime / total I/Os; perflab: process CPU / I/Os).
# The goal: IOPS >= 0.95 x fio's at every job, p50 and p99 within 10 %. Beside each, the device's own
# mean time per request while that tool ran (/proc/diskstats: ticks / requests completed, as iostat's
# r_await / w_await), so that a gap the device made is told from one a tool made.
#
#   bench/disk_vs_fio.sh                 # 5 rounds x 10 s per job, a 1 GiB file in $TMPDIR (/tmp)
#   bench/disk_vs_fio.sh --quick         # 1 round x 3 s
#   ROUNDS=3 DUR=4 SIZE=1G DIR=/var/tmp bench/disk_vs_fio.sh
#
# fio is installed with apt-get when missing. The file is laid out once before the first round (by
# perflab, kept) and removed at the end with the temporary directory.
set -euo pipefail

ROUNDS="${ROUNDS:-5}" DUR="${DUR:-10}" SIZE="${SIZE:-1G}" DIR="${DIR:-${TMPDIR:-/tmp}}"
case "${1:-}" in
    --quick) ROUNDS=1 DUR=3 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    "") ;;
    *) echo "disk_vs_fio.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PERFLAB="$ROOT/target/release/perflab"
[ -x "$PERFLAB" ] || (cd "$ROOT" && cargo build --release -q)
if ! command -v fio >/dev/null; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get -y -q install fio >/dev/null
fi
T="$(mktemp -d "$DIR/perflab-diskbench.XXXXXX")"
trap 'rm -rf "$T"' EXIT
F="$T/data"
echo "file $F ($(stat -f -c %T "$T")), $SIZE, $ROUNDS round(s) x ${DUR}s per job, direct, io_uring"
DEV="$(basename "$(findmnt -n -o SOURCE --target "$T" 2>/dev/null || true)")"
grep -q " $DEV " /proc/diskstats 2>/dev/null || DEV=""
# The device's requests completed and milliseconds spent, for reads (r) or writes (w).
ticks() { [ -n "$DEV" ] && awk -v d="$DEV" -v w="$1" '$3 == d { print (w == "w" ? $8 " " $11 : $4 " " $7) }' /proc/diskstats || echo "0 0"; }
await_us() { awk -v a="$1" -v b="$2" -v c="$3" -v d="$4" 'BEGIN { if (c > a) printf "%.0f", (d - b) * 1000 / (c - a); else print 0 }'; }

# name rw bs iodepth
JOBS="randread-4k-qd1 randread 4k 1
randread-4k-qd32 randread 4k 32
randwrite-4k-qd32 randwrite 4k 32
read-1m-qd1 read 1m 1
write-1m-qd1 write 1m 1"

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A V
# One round of one job: perflab then fio, or fio then perflab (the order swaps each round, so that
# neither tool always runs on a disk and a page cache the other just left).
run_perflab() {
    local w=r; [[ $1 == *write* ]] && w=w
    read -r a b < <(ticks $w)
    "$PERFLAB" load disk -f "$F" -s "$SIZE" --rw "$1" --bs "$2" --iodepth "$3" --engine io_uring \
        -d "${DUR}s" --keep -q --json >"$T/p.json"
    read -r c d < <(ticks $w); pdev=$(await_us "$a" "$b" "$c" "$d")
}
run_fio() {
    local w=r; [[ $1 == *write* ]] && w=w
    read -r a b < <(ticks $w)
    fio --name=j --filename="$F" --size="$SIZE" --rw="$1" --bs="$2" --iodepth="$3" \
        --ioengine=io_uring --direct=1 --time_based --runtime="$DUR" --lat_percentiles=1 \
        --output-format=json --output="$T/f.json" >/dev/null
    read -r c d < <(ticks $w); fdev=$(await_us "$a" "$b" "$c" "$d")
}
[ -f "$F" ] || "$PERFLAB" load disk -f "$F" -s "$SIZE" --rw read --bs 1M --ops 1 --keep -q --json >/dev/null
for round in $(seq "$ROUNDS"); do
    while read -r name rw bs qd; do
        if [ $((round % 2)) -eq 1 ]; then
            run_perflab "$rw" "$bs" "$qd"; run_fio "$rw" "$bs" "$qd"
        else
            run_fio "$rw" "$bs" "$qd"; run_perflab "$rw" "$bs" "$qd"
        fi
        read -r pi p50 p99 pc fi f50 f99 fc < <(python3 - "$T/p.json" "$T/f.json" "$rw" <<'PY'
import json, sys
p, f, rw = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
d = "read" if "read" in rw else "write"
pd, job = p[d], f["jobs"][0]
fd = job[d]
ios = fd["total_ios"]
fcpu = (job["usr_cpu"] + job["sys_cpu"]) / 100 * job["job_runtime"] * 1000 / max(ios, 1)
pct = fd["lat_ns"]["percentile"]
print(pd["iops"], pd["lat_us"]["p50"], pd["lat_us"]["p99"], p["cpu_us_per_io"],
      fd["iops"], pct["50.000000"] / 1000, pct["99.000000"] / 1000, fcpu)
PY
)
        printf '  round %d %-18s perflab %8.0f IOPS p50 %6.0f p99 %6.0f dev %5.0f | fio %8.0f IOPS p50 %6.0f p99 %6.0f dev %5.0f\n' \
            "$round" "$name" "$pi" "$p50" "$p99" "$pdev" "$fi" "$f50" "$f99" "$fdev"
        for k in pi p50 p99 pc fi f50 f99 fc pdev fdev; do V[$name.$k]+="${!k} "; done
    done <<<"$JOBS"
done

printf '\n%-18s %10s %10s %6s | %8s %8s %6s | %8s %8s %6s | %7s %7s %6s | %6s %6s %6s\n' job perflab fio ratio \
    p50 fio ratio p99 fio ratio "cpu/io" fio ratio dev fio ratio
while read -r name _; do
    m() { tr ' ' '\n' <<<"${V[$name.$1]}" | grep . | median; }
    pi=$(m pi) fi=$(m fi) p50=$(m p50) f50=$(m f50) p99=$(m p99) f99=$(m f99) pc=$(m pc) fc=$(m fc)
    pdev=$(m pdev) fdev=$(m fdev)
    r() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
    printf '%-18s %10.0f %10.0f %6s | %8.0f %8.0f %6s | %8.0f %8.0f %6s | %7.1f %7.1f %6s | %6.0f %6.0f %6s\n' "$name" \
        "$pi" "$fi" "$(r "$pi" "$fi")" "$p50" "$f50" "$(r "$p50" "$f50")" "$p99" "$f99" "$(r "$p99" "$f99")" \
        "$pc" "$fc" "$(r "$pc" "$fc")" "$pdev" "$fdev" "$(r "$pdev" "$fdev")"
done <<<"$JOBS"
echo "(IOPS; lat p50/p99 in µs; CPU per I/O in µs; dev: the device's mean µs per request (0: unknown); medians of $ROUNDS round(s))"
