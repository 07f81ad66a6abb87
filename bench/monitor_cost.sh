#!/usr/bin/env bash
# The cost of sampling: CPU % of one core and max RSS of `perflab monitor` at 1 Hz and 10 Hz over
# 60 s, against sysstat's collectors doing the same job at 1 Hz (sadc and pidstat take whole seconds
# only, so at 10 Hz the comparison is per sample). perflab's goal: sampling at 1 Hz costs under 0.2 %
# of one core, so that the monitor does not disturb what it measures.
#
#   bench/monitor_cost.sh            # 60 s
#   bench/monitor_cost.sh --quick    # 10 s smoke test
#   options: --duration S
#
# All collectors run side by side over the same seconds, each writing its samples to a file:
#   system : perflab monitor (every system group, --csv)   vs  sadc -S DISK,SNMP (binary file)
#   process: perflab monitor --only proc --pid ROOT         vs  pidstat -h -u -r -d -w -p PIDS
#            (a tree of 3 sleeping processes; perflab scans /proc for the tree, pidstat is given the pids)
#   both   : perflab monitor --pid ROOT (what a trial of `perflab run` samples)
# CPU is user + sys from bash's `time` (ms resolution) around /usr/bin/time (which gives max RSS);
# the wrapper's own cost, measured on `sleep`, is subtracted. Goal: < 0.2 % of a core at 1 Hz.
set -euo pipefail

DUR=60
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) DUR=10 ;;
        --duration) DUR="$2"; shift ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "monitor_cost.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PERFLAB="$ROOT/target/release/perflab"
SADC=""
for p in /usr/lib/sysstat/sadc /usr/lib64/sa/sadc /usr/libexec/sysstat/sadc; do [ -x "$p" ] && SADC=$p && break; done
if [ -z "$SADC" ] || ! command -v pidstat >/dev/null || [ ! -x /usr/bin/time ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "installing: sysstat time"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get -y -q install sysstat time >/dev/null ||
        { $SUDO apt-get -q update >/dev/null && $SUDO apt-get -y -q install sysstat time >/dev/null; }
    for p in /usr/lib/sysstat/sadc /usr/lib64/sa/sadc /usr/libexec/sysstat/sadc; do [ -x "$p" ] && SADC=$p && break; done
fi
if [ ! -x "$PERFLAB" ]; then
    echo "building the release binary"
    (cd "$ROOT" && cargo build --release -q)
fi

T="$(mktemp -d /tmp/perflab-moncost.XXXXXX)"
TREE=""
cleanup() {
    [ -n "$TREE" ] && kill -- "-$TREE" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The process tree to follow: a shell with two sleeping children, in its own process group.
set -m
sh -c 'sleep 100000 & sleep 100000 & wait' &
TREE=$!
set +m
sleep 0.3
KIDS=$(pgrep -P "$TREE" | paste -sd, -)
PIDS="$TREE,$KIDS"

# job NAME CMD...: run CMD in the background; CPU (ms) into NAME.cpu, max RSS (KiB) into NAME.rss.
job() {
    local name=$1; shift
    (
        TIMEFORMAT='%3U %3S'
        time /usr/bin/time -f '%M' -o "$T/$name.rss" "$@" >"$T/$name.out" 2>"$T/$name.err"
    ) 2>"$T/$name.cpu" &
}

N1=$DUR N10=$((DUR * 10))
echo "sampling cost over ${DUR} s — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(uname -r)"
echo "sysstat $("$SADC" -V 2>&1 | awk '/version/ { print $NF; exit }'), perflab $("$PERFLAB" --version | awk '{ print $2 }')"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); process tree followed: $PIDS"
job wrapper sleep "$DUR"
job sys1 "$PERFLAB" monitor -q -i 1s -c "$N1" --csv "$T/sys1.csv"
job sys10 "$PERFLAB" monitor -q -i 100ms -c "$N10" --csv "$T/sys10.csv"
job sadc "$SADC" -S DISK,SNMP 1 $((N1 + 1)) "$T/sa.bin"
job proc1 "$PERFLAB" monitor -q -i 1s -c "$N1" --only proc --pid "$TREE" --csv "$T/proc1.csv"
job proc10 "$PERFLAB" monitor -q -i 100ms -c "$N10" --only proc --pid "$TREE" --csv "$T/proc10.csv"
job pidstat pidstat -h -u -r -d -w -p "$PIDS" 1 "$N1"
job both1 "$PERFLAB" monitor -q -i 1s -c "$N1" --pid "$TREE" --csv "$T/both1.csv"
job both10 "$PERFLAB" monitor -q -i 100ms -c "$N10" --pid "$TREE" --csv "$T/both10.csv"
wait_jobs() { while [ "$(jobs -rp | grep -vc "^$TREE$")" -gt 0 ]; do sleep 1; done; }
sleep "$DUR"
wait_jobs
echo "load average at end:   $(cut -d' ' -f1-3 /proc/loadavg)"
echo

ms() { awk '{ printf "%.0f", ($1 + $2) * 1000 }' "$T/$1.cpu"; }
W=$(ms wrapper)
rows() { # NAME LABEL HZ SAMPLES
    local cpu pct per rss
    cpu=$(awk -v c="$(ms "$1")" -v w="$W" 'BEGIN { v = c - w; print (v < 0 ? 0 : v) }')
    pct=$(awk -v c="$cpu" -v d="$DUR" 'BEGIN { printf "%.3f", c / 10 / d }')
    per=$(awk -v c="$cpu" -v n="$4" 'BEGIN { printf "%.3f", c / n }')
    rss=$(cat "$T/$1.rss" 2>/dev/null | tail -1)
    printf '| %-46s | %5s | %8s | %8s | %10s | %8s |\n' "$2" "$3" "$cpu" "$pct" "$per" "$rss"
    eval "PCT_$1=$pct PER_$1=$per RSS_$1=$rss"
}
for n in sys1 sys10 proc1 proc10 both1 both10 sadc pidstat; do
    if [ -s "$T/$n.err" ] && ! grep -q . "$T/$n.cpu"; then echo "$n failed:"; cat "$T/$n.err"; fi
done
echo "CPU (ms, wrapper's ${W} ms subtracted), % of one core, ms per sample, max RSS (KiB)"
printf '| %-46s | %5s | %8s | %8s | %10s | %8s |\n' collector Hz "CPU ms" "% core" "ms/sample" "RSS KiB"
printf '|%s|%s|%s|%s|%s|%s|\n' "------------------------------------------------" "-------" "----------" "----------" "------------" "----------"
rows sadc "sadc -S DISK,SNMP (system)" 1 "$N1"
rows sys1 "perflab monitor (system)" 1 "$N1"
rows sys10 "perflab monitor (system)" 10 "$N10"
rows pidstat "pidstat -urdw -p 3 pids" 1 "$N1"
rows proc1 "perflab monitor --only proc --pid (tree of 3)" 1 "$N1"
rows proc10 "perflab monitor --only proc --pid (tree of 3)" 10 "$N10"
rows both1 "perflab monitor --pid (system + tree)" 1 "$N1"
rows both10 "perflab monitor --pid (system + tree)" 10 "$N10"
echo
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo "Ratios (perflab / sysstat)"
echo "  system,  1 Hz, CPU:         $(ratio "$PCT_sys1" "$PCT_sadc") x sadc      RSS: $(ratio "$RSS_sys1" "$RSS_sadc") x"
echo "  system, 10 Hz, per sample:  $(ratio "$PER_sys10" "$PER_sadc") x sadc's"
echo "  process, 1 Hz, CPU:         $(ratio "$PCT_proc1" "$PCT_pidstat") x pidstat   RSS: $(ratio "$RSS_proc1" "$RSS_pidstat") x"
echo "  process, 10 Hz, per sample: $(ratio "$PER_proc10" "$PER_pidstat") x pidstat's"
echo
echo "Goal: under 0.2 % of one core at 1 Hz"
v() { awk -v p="$1" 'BEGIN { print (p < 0.2 ? "PASS" : "MISS") }'; }
echo "| perflab monitor (system), 1 Hz         | ${PCT_sys1} % | $(v "$PCT_sys1") |"
echo "| perflab monitor --pid (system + tree), 1 Hz | ${PCT_both1} % | $(v "$PCT_both1") |"
echo "(10 Hz, for reference: system ${PCT_sys10} %, system + tree ${PCT_both10} %)"
