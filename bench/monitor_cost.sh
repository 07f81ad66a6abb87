#!/usr/bin/env bash
# The cost of sampling: CPU % of one core and max RSS of `perflab monitor` at 1 Hz and 10 Hz, against
# sysstat's collectors doing the same job at 1 Hz (sadc and pidstat take whole seconds only, so at
# 10 Hz the comparison is per sample), on a machine with OTHERS extra processes (default 1 000
# sleeping `sleep`s this script starts, in their own process group, killed by their pids at the end).
# perflab's goals at 1 Hz: the system sampler alone under 0.05 % of one core, system + a `--match`
# selection among all those processes under 0.2 %.
#
#   bench/monitor_cost.sh            # 5 rounds of 60 s
#   bench/monitor_cost.sh --quick    # 1 round of 10 s, a smoke test
#   options: --duration S, --rounds R, --others N (0: none)
#   PERFLAB_BEFORE=/path/to/older/perflab adds that build's --match collectors beside this one's
#
# In each round all collectors run side by side over the same seconds, each writing its samples to
# a file; the rounds repeat that, and the table gives each collector's median and range:
#   system : perflab monitor (every system group, --csv)   vs  sadc -S DISK,SNMP (binary file)
#   process: perflab monitor --only proc --pid ROOT         vs  pidstat -h -u -r -d -w -p PIDS
#            (a tree of 3 sleeping processes; perflab scans /proc for the tree, pidstat is given the pids)
#   match  : perflab monitor --only proc --match TREE       vs  pidstat -h -l -u -r -d -w -C TREE
#            (the same tree found by its command line among every process: pidstat reads them all)
#   both   : perflab monitor --pid ROOT / --match TREE (what a trial of `perflab run` samples)
#   no taskstats: the --match collectors again without CAP_NET_ADMIN (setpriv), so without the
#            taskstats request per followed process per tick (whole-process context switches): the
#            difference is that request's cost (root only; skipped where setpriv is missing)
# CPU is user + sys from bash's `time` (ms resolution) around /usr/bin/time (which gives max RSS);
# the wrapper's own cost, measured on `sleep`, is subtracted. The load average is printed with
# every round.
set -euo pipefail

DUR=60
ROUNDS=5
OTHERS=1000
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) DUR=10; ROUNDS=1 ;;
        --duration) DUR="$2"; shift ;;
        --rounds) ROUNDS="$2"; shift ;;
        --others) OTHERS="$2"; shift ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        *) echo "monitor_cost.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
[ "$ROUNDS" -ge 1 ] || { echo "monitor_cost.sh: --rounds must be at least 1" >&2; exit 2; }
[ "$OTHERS" -ge 0 ] && [ "$OTHERS" -le 5000 ] || { echo "monitor_cost.sh: --others must be 0 to 5000" >&2; exit 2; }
BEFORE="${PERFLAB_BEFORE:-}"
[ -z "$BEFORE" ] || [ -x "$BEFORE" ] || { echo "monitor_cost.sh: PERFLAB_BEFORE=$BEFORE is not an executable" >&2; exit 2; }

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PERFLAB="${PERFLAB:-$ROOT/target/release/perflab}"
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
GANG=""
cleanup() {
    [ -n "$TREE" ] && kill -- "-$TREE" 2>/dev/null
    if [ -n "$GANG" ]; then
        # The other processes, by their pids, then their group's leader.
        [ -s "$T/gang.pids" ] && xargs -r kill 2>/dev/null <"$T/gang.pids"
        kill "$GANG" 2>/dev/null
    fi
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The process tree to follow: a shell with two sleeping children, in its own process group; its
# command line carries a mark for --match / pidstat -C. The pattern given is `plmoncos[t]tree`, which
# matches the mark but not itself: the collectors' own command lines (and their wrappers') are no match.
MARK=plmoncosttree
PAT='plmoncos[t]tree'
set -m
sh -c "sleep 100000 & sleep 100000 & wait # $MARK" &
TREE=$!
# The other processes: OTHERS sleeps under one shell, in a process group of their own. Bounded:
# they sleep, and the script kills them on every exit.
if [ "$OTHERS" -gt 0 ]; then
    sh -c "i=0; while [ \$i -lt $OTHERS ]; do sleep 100000 & i=\$((i + 1)); done; wait" &
    GANG=$!
fi
set +m
sleep 0.3
KIDS=$(pgrep -P "$TREE" | paste -sd, -)
PIDS="$TREE,$KIDS"
if [ -n "$GANG" ]; then
    for _ in $(seq 100); do
        [ "$(pgrep -P "$GANG" | wc -l)" -ge "$OTHERS" ] && break
        sleep 0.1
    done
    pgrep -P "$GANG" >"$T/gang.pids" || true
fi

# job NAME CMD...: run CMD in the background; CPU (ms) into NAME.cpu, max RSS (KiB) into NAME.rss.
job() {
    local name=$1; shift
    (
        TIMEFORMAT='%3U %3S'
        time /usr/bin/time -f '%M' -o "$T/$name.rss" "$@" >"$T/$name.out" 2>"$T/$name.err"
    ) 2>"$T/$name.cpu" &
}

N1=$DUR N10=$((DUR * 10))
echo "sampling cost, ${ROUNDS} round(s) of ${DUR} s — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(uname -r)"
echo "sysstat $("$SADC" -V 2>&1 | awk '/version/ { print $NF; exit }'), perflab $("$PERFLAB" --version | awk '{ print $2 }')${BEFORE:+, before: $BEFORE}"
echo "processes on the machine: $(ls -d /proc/[0-9]* | wc -l) ($OTHERS started here); tree followed: $PIDS"
NAMES="sys1 sys10 proc1 proc10 match1 both1 both10 bothm1 sadc pidstat pidstatc"
[ -z "$BEFORE" ] || NAMES="$NAMES bmatch1 bbothm1"
NOTS=""
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    NOTS="setpriv --inh-caps=-net_admin --bounding-set=-net_admin"
    NAMES="$NAMES match1nt bothm1nt"
fi
ms() { awk '{ printf "%.0f", ($1 + $2) * 1000 }' "$T/$1.cpu"; }
for r in $(seq "$ROUNDS"); do
    echo "round $r: load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
    job wrapper sleep "$DUR"
    job sys1 "$PERFLAB" monitor -q -i 1s -c "$N1" --csv "$T/sys1.csv"
    job sys10 "$PERFLAB" monitor -q -i 100ms -c "$N10" --csv "$T/sys10.csv"
    job sadc "$SADC" -S DISK,SNMP 1 $((N1 + 1)) "$T/sa.bin"
    job proc1 "$PERFLAB" monitor -q -i 1s -c "$N1" --only proc --pid "$TREE" --csv "$T/proc1.csv"
    job proc10 "$PERFLAB" monitor -q -i 100ms -c "$N10" --only proc --pid "$TREE" --csv "$T/proc10.csv"
    job match1 "$PERFLAB" monitor -q -i 1s -c "$N1" --only proc --match "$PAT" --csv "$T/match1.csv"
    job pidstat pidstat -h -u -r -d -w -p "$PIDS" 1 "$N1"
    job pidstatc pidstat -h -l -u -r -d -w -C "$PAT" 1 "$N1"
    job both1 "$PERFLAB" monitor -q -i 1s -c "$N1" --pid "$TREE" --csv "$T/both1.csv"
    job both10 "$PERFLAB" monitor -q -i 100ms -c "$N10" --pid "$TREE" --csv "$T/both10.csv"
    job bothm1 "$PERFLAB" monitor -q -i 1s -c "$N1" --match "$PAT" --csv "$T/bothm1.csv"
    if [ -n "$NOTS" ]; then
        job match1nt $NOTS "$PERFLAB" monitor -q -i 1s -c "$N1" --only proc --match "$PAT" --csv "$T/match1nt.csv"
        job bothm1nt $NOTS "$PERFLAB" monitor -q -i 1s -c "$N1" --match "$PAT" --csv "$T/bothm1nt.csv"
    fi
    if [ -n "$BEFORE" ]; then
        job bmatch1 "$BEFORE" monitor -q -i 1s -c "$N1" --only proc --match "$PAT" --csv "$T/bmatch1.csv"
        job bbothm1 "$BEFORE" monitor -q -i 1s -c "$N1" --match "$PAT" --csv "$T/bbothm1.csv"
    fi
    sleep "$DUR"
    while [ "$(jobs -rp | grep -cvxE "${TREE}|${GANG:-$TREE}")" -gt 0 ]; do sleep 1; done
    W=$(ms wrapper)
    for n in $NAMES; do
        if [ -s "$T/$n.err" ] && ! grep -q . "$T/$n.cpu"; then echo "$n failed:"; cat "$T/$n.err"; fi
        cpu=$(awk -v c="$(ms "$n")" -v w="$W" 'BEGIN { v = c - w; print (v < 0 ? 0 : v) }')
        echo "$cpu $(tail -1 "$T/$n.rss" 2>/dev/null)" >>"$T/$n.rounds"
    done
    # The tree is found: the --match collectors saw 3 processes.
    m=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /_count$/) c = i } NR > 1 && c { v = $c } END { print v + 0 }' "$T/match1.csv")
    echo "round $r: load average at end   $(cut -d' ' -f1-3 /proc/loadavg); wrapper ${W} ms; --match found $m processes"
done
echo

# rows NAME LABEL HZ SAMPLES: the median CPU over the rounds (and its range), % of a core, per
# sample, the median max RSS.
rows() {
    local med lo hi pct per rss
    read -r med lo hi < <(awk '{ print $1 }' "$T/$1.rounds" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], v[1], v[NR] }')
    rss=$(awk '{ print $2 }' "$T/$1.rounds" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    pct=$(awk -v c="$med" -v d="$DUR" 'BEGIN { printf "%.3f", c / 10 / d }')
    per=$(awk -v c="$med" -v n="$4" 'BEGIN { printf "%.3f", c / n }')
    printf '| %-50s | %3s | %6s | %11s | %7s | %9s | %7s |\n' "$2" "$3" "$med" "$lo-$hi" "$pct" "$per" "$rss"
    eval "PCT_$1=$pct PER_$1=$per RSS_$1=$rss"
}
echo "CPU (ms, wrapper subtracted; median of ${ROUNDS} and range), % of one core, ms per sample, max RSS (KiB)"
printf '| %-50s | %3s | %6s | %11s | %7s | %9s | %7s |\n' collector Hz "CPU ms" range "% core" "ms/sample" "RSS KiB"
printf '|%s|%s|%s|%s|%s|%s|%s|\n' "----------------------------------------------------" "-----" "--------" "-------------" "---------" "-----------" "---------"
rows sadc "sadc -S DISK,SNMP (system)" 1 "$N1"
rows sys1 "perflab monitor (system)" 1 "$N1"
rows sys10 "perflab monitor (system)" 10 "$N10"
rows pidstat "pidstat -urdw -p 3 pids" 1 "$N1"
rows proc1 "perflab monitor --only proc --pid (tree of 3)" 1 "$N1"
rows proc10 "perflab monitor --only proc --pid (tree of 3)" 10 "$N10"
rows pidstatc "pidstat -urdw -l -C (tree among all)" 1 "$N1"
rows match1 "perflab monitor --only proc --match (tree among all)" 1 "$N1"
rows both1 "perflab monitor --pid (system + tree)" 1 "$N1"
rows both10 "perflab monitor --pid (system + tree)" 10 "$N10"
rows bothm1 "perflab monitor --match (system + tree among all)" 1 "$N1"
if [ -n "$NOTS" ]; then
    rows match1nt "no taskstats: --only proc --match" 1 "$N1"
    rows bothm1nt "no taskstats: --match (system + tree among all)" 1 "$N1"
fi
if [ -n "$BEFORE" ]; then
    rows bmatch1 "before: --only proc --match" 1 "$N1"
    rows bbothm1 "before: --match (system + tree among all)" 1 "$N1"
fi
echo
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo "Ratios (perflab / sysstat)"
echo "  system,  1 Hz, CPU:         $(ratio "$PCT_sys1" "$PCT_sadc") x sadc      RSS: $(ratio "$RSS_sys1" "$RSS_sadc") x"
echo "  system, 10 Hz, per sample:  $(ratio "$PER_sys10" "$PER_sadc") x sadc's"
echo "  process, 1 Hz, CPU:         $(ratio "$PCT_proc1" "$PCT_pidstat") x pidstat   RSS: $(ratio "$RSS_proc1" "$RSS_pidstat") x"
echo "  process, 10 Hz, per sample: $(ratio "$PER_proc10" "$PER_pidstat") x pidstat's"
echo "  match, 1 Hz, CPU:           $(ratio "$PCT_match1" "$PCT_pidstatc") x pidstat -C"
[ -z "$NOTS" ] || echo "  taskstats (3 followed processes, 1 Hz): $(awk -v a="$PCT_match1" -v b="$PCT_match1nt" 'BEGIN { printf "%+.3f", a - b }') % of a core (--only proc --match), $(awk -v a="$PCT_bothm1" -v b="$PCT_bothm1nt" 'BEGIN { printf "%+.3f", a - b }') % (system + match)"
[ -z "$BEFORE" ] || echo "  match, 1 Hz, after/before:  $(ratio "$PCT_match1" "$PCT_bmatch1") x (--only proc), $(ratio "$PCT_bothm1" "$PCT_bbothm1") x (system + match)"
echo
echo "Goals at 1 Hz ($(ls -d /proc/[0-9]* | wc -l) processes on the machine)"
v() { awk -v p="$1" -v g="$2" 'BEGIN { print (p <= g ? "PASS" : "MISS") }'; }
echo "| perflab monitor (system) <= 0.05 %                  | ${PCT_sys1} % | $(v "$PCT_sys1" 0.05) |"
echo "| perflab monitor --match (system + tree) <= 0.2 %   | ${PCT_bothm1} % | $(v "$PCT_bothm1" 0.2) |"
echo "| perflab monitor --pid (system + tree) <= 0.2 %     | ${PCT_both1} % | $(v "$PCT_both1" 0.2) |"
echo "(10 Hz, for reference: system ${PCT_sys10} %, system + tree ${PCT_both10} %)"
