#!/usr/bin/env bash
# The cost and the truth of the latency probes:
#  1. CPU per probe, per kind (icmp, udp, tcp, http, command `true`), each against an anchor doing
#     the same exchange with nothing else: iputils `ping` for icmp, bench/probe_anchor.c (a minimal C
#     loop, compiled here) for the others. Every probe every 10 ms (100 Hz); perflab and its anchor
#     alternate, one after the other, each alone. Two ways to measure, the same counter (the time
#     the kernel gives the process, softirqs done in its context included):
#     - udp, tcp, http (both keep an absolute schedule, so W seconds hold W × 100 probes): steady-
#       state windows, the sum of /proc/PID/task/*/schedstat over W s (default 1) after 0.7 s, over
#       W × 100; the two alternate window by window, many rounds (default 30), each round's ratio
#       paired. On a VM the cost of a probe drifts by 15-30 % over tens of seconds (the host's
#       state), so the closer in time the two figures, the narrower the verdict's interval.
#     - icmp, command (ping's schedule is not absolute; a command's `true` is a child, whose time
#       only wait4 reports): the process's user + system time (wait4's rusage, for `command` the
#       `true`s it ran included) of a run of N2 probes less that of a run of N1 probes, over
#       N2 - N1: start-up and exit cancel out; R rounds (default 5).
#     Two paths: loopback (127.0.0.1), and a peer in a network namespace over a veth pair
#     (198.18.17.2, the benchmarking range; the root namespace gets an `unreachable` route for
#     198.18.17.0/24 before the pair is addressed, so nothing of it can leave the machine; the
#     namespace, the pair and the route are removed on every exit, Ctrl-C included). Needs root
#     for the namespace; without it only loopback is measured.
#     Then the five kinds at 100 Hz together in % of one core (the sum of the per-probe figures ×
#     100/s), perflab's and the anchors', with ratios. Goal: perflab's five < 1 % of a core.
#  2. Latency: `perflab probe icmp 127.0.0.1 -i 200ms` and iputils `ping -i 0.2 127.0.0.1` over the
#     same seconds, their sends 100 ms apart so that they never meet. Goal: medians within 5 %.
#
#   bench/probe_cost.sh               # N1 200, N2 2200 probes, 5 rounds; 30 windows of 1 s; part 2 60 s
#   bench/probe_cost.sh --quick       # N1 100, N2 600, 1 round; 3 windows; part 2 15 s, a smoke test
#   options: --n2 N, --reps R (rounds of runs for icmp and command, perflab and its anchor
#            alternating in each; the median of each figure and the range of the ratios; default 5),
#            --windows N (rounds of windows for udp, tcp, http; default 30), --window S (its
#            length in whole seconds; default 1),
#            --kinds "udp tcp" (a subset), --no-netns (loopback only), --duration S (part 2)
#   PERFLAB=/path/to/perflab measures that build (default: target/release/perflab)
#   --against /path/to/perflab: that build is the anchor of every kind (the same probe, the same
#            windows and rounds), for a build against the build before: the ratio is this one's
#            CPU per probe over that one's
#   --anchor-as-perflab: the C loop makes perflab's system calls where they differ from its own
#            (sleeps in ppoll on an epoll descriptor, reads TCP_INFO after a tcp connect, asks for
#            and reads udp receive timestamps, keeps a second thread idle): what is left above it
#            is perflab's own code and data
set -euo pipefail

N1=200
N2=2200
REPS=5
WINDOWS=30
WIN=1
DUR=60
KINDS="icmp udp tcp http command"
NETNS=1
AGAINST=
AS_PERFLAB=0
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) N1=100; N2=600; DUR=15; REPS=1; WINDOWS=3 ;;
        --windows) WINDOWS="$2"; shift ;;
        --window) WIN="$2"; shift ;;
        --kinds) KINDS="$2"; shift ;;
        --n2) N2="$2"; shift ;;
        --reps) REPS="$2"; shift ;;
        --duration) DUR="$2"; shift ;;
        --no-netns) NETNS=0 ;;
        --against) AGAINST="$2"; shift ;;
        --anchor-as-perflab) AS_PERFLAB=1 ;;
        -h|--help) sed -n '2,41p' "$0"; exit 0 ;;
        *) echo "probe_cost.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
[ -z "$AGAINST" ] || [ -x "$AGAINST" ] || { echo "probe_cost.sh: --against $AGAINST is not an executable" >&2; exit 2; }
[ "$DUR" -ge 5 ] || { echo "probe_cost.sh: --duration must be at least 5" >&2; exit 2; }
[ "$N2" -gt "$N1" ] || { echo "probe_cost.sh: --n2 must be more than $N1" >&2; exit 2; }
[ "$REPS" -ge 1 ] || { echo "probe_cost.sh: --reps must be at least 1" >&2; exit 2; }
[ "$WINDOWS" -ge 1 ] 2>/dev/null || { echo "probe_cost.sh: --windows must be at least 1" >&2; exit 2; }
[ "$WIN" -ge 1 ] 2>/dev/null || { echo "probe_cost.sh: --window must be a whole number of seconds, at least 1" >&2; exit 2; }

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PERFLAB="${PERFLAB:-$ROOT/target/release/perflab}"
for tool in ping gcc python3; do
    command -v "$tool" >/dev/null || { echo "probe_cost.sh: needs $tool (apt-get install iputils-ping gcc python3)" >&2; exit 2; }
done
if [ ! -x "$PERFLAB" ]; then
    echo "building the release binary"
    (cd "$ROOT" && cargo build --release -q)
fi
if [ "$NETNS" = 1 ] && { [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; }; then
    echo "probe_cost.sh: NOTE: the namespace path needs root and iproute2; measuring loopback only" >&2
    NETNS=0
fi

T="$(mktemp -d /tmp/perflab-probecost.XXXXXX)"
NS="plpc$$"
VA="plpc$$a"
VB="plpc$$b"
SUBNET=198.18.17.0/24
PEER=198.18.17.2
PIDS=()
WPID=
ROUTE=0
cleanup() {
    for p in "${PIDS[@]}" $WPID; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [ "$NETNS" = 1 ]; then
        ip netns del "$NS" 2>/dev/null || true
        ip link del "$VA" 2>/dev/null || true
        [ "$ROUTE" = 0 ] || ip route del unreachable "$SUBNET" 2>/dev/null || true
    fi
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

gcc -O2 -pthread -o "$T/probe_anchor" "$ROOT/bench/probe_anchor.c"
# cpu CMD...: run it to its end; print its user and system time in µs (wait4's rusage).
cat >"$T/cpu.py" <<'EOF'
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
print(round(ru.ru_utime * 1e6), round(ru.ru_stime * 1e6), os.waitstatus_to_exitcode(status))
EOF
cpu() { python3 "$T/cpu.py" "$@"; }

# serve_at FILE [ip netns exec NS]: start perflab serve (HTTP + UDP echo) on ADDR; sets HTTP_PORT, UDP_PORT.
serve_at() {
    local addr=$1 out=$2; shift 2
    : >"$out"
    "$@" "$PERFLAB" serve --host "$addr" --port 0 --threads 1 --udp-echo 0 >"$out" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 50); do [ "$(wc -l <"$out")" -ge 2 ] && break; sleep 0.1; done
    HTTP_PORT=$(grep -o 'http://[^ ]*' "$out" | sed 's/.*://; s/[^0-9].*//')
    UDP_PORT=$(awk '/echoing udp/ { print $4 }' "$out" | sed 's/.*://')
    [ -n "$HTTP_PORT" ] && [ -n "$UDP_PORT" ] || { echo "probe_cost.sh: perflab serve did not start: $(cat "$out")" >&2; exit 1; }
}

# commands KIND ADDR: sets OURS and ANCHOR, perflab's probe and its anchor (without the count).
commands() {
    local kind=$1 addr=$2
    case "$kind" in
        icmp) OURS=(icmp "$addr"); ANCHOR=(ping -q -i 0.01 -W 1 -c) ;;
        udp) OURS=(udp "$addr:$UDP_PORT"); ANCHOR=("$T/probe_anchor" udp "$addr" "$UDP_PORT") ;;
        tcp) OURS=(tcp "$addr:$HTTP_PORT"); ANCHOR=("$T/probe_anchor" tcp "$addr" "$HTTP_PORT") ;;
        http) OURS=(http "http://$addr:$HTTP_PORT/"); ANCHOR=("$T/probe_anchor" http "$addr" "$HTTP_PORT") ;;
        command) OURS=(command true); ANCHOR=("$T/probe_anchor" command 127.0.0.1 0) ;;
    esac
    if [ "$AS_PERFLAB" = 1 ] && [ "${ANCHOR[0]}" = "$T/probe_anchor" ]; then
        ANCHOR=(env PROBE_ANCHOR_AS_PERFLAB=1 "${ANCHOR[@]}")
    fi
    if [ -n "$AGAINST" ]; then
        # The other build, given the count as the anchors are (the rest of their arguments unused).
        printf '#!/bin/sh\nexec %q probe %s -i 10ms -q -c "$1"\n' "$AGAINST" "$(printf '%q ' "${OURS[@]}")" >"$T/against-$kind"
        chmod +x "$T/against-$kind"
        ANCHOR=("$T/against-$kind")
    fi
}

# windowed KIND: whether KIND is measured in steady-state windows.
windowed() { case "$1" in udp|tcp|http) return 0 ;; *) return 1 ;; esac; }

# per_probe KIND ADDR: prints "perflab_us anchor_us" (user + system time per probe) from runs of
# N2 and N1 probes. The split between user and system time is not printed: without
# CONFIG_VIRT_CPU_ACCOUNTING the kernel splits a task's time by which side the timer tick (4 ms at
# HZ=250) found it on, meaningless for probes of ~100 µs; `perf record` on the prober gives the
# split (docs/probes.md).
per_probe() {
    local kind=$1 addr=$2 n
    commands "$kind" "$addr"
    declare -A R
    for n in "$N1" "$N2"; do
        R[p$n]=$(cpu "$PERFLAB" probe "${OURS[@]}" -i 10ms -q -c "$n")
        if [ "$kind" = icmp ]; then
            R[a$n]=$(cpu "${ANCHOR[@]}" "$n" "$addr")
        else
            R[a$n]=$(cpu "${ANCHOR[@]}" "$n" 10000)
        fi
    done
    awk -v p1="${R[p$N1]}" -v p2="${R[p$N2]}" -v a1="${R[a$N1]}" -v a2="${R[a$N2]}" -v d=$((N2 - N1)) 'BEGIN {
        split(p1, P1); split(p2, P2); split(a1, A1); split(a2, A2)
        pu = (P2[1] - P1[1]) / d; ps = (P2[2] - P1[2]) / d; au = (A2[1] - A1[1]) / d; as = (A2[2] - A1[2]) / d
        printf "%.1f %.1f\n", pu + ps, au + as
    }'
}

# ns_of PID: the CPU time of all its threads so far, in ns (schedstat's first field; wait4's
# rusage is the same sum at the end).
ns_of() {
    local f s=0 a
    for f in /proc/"$1"/task/*/schedstat; do
        read -r a _ <"$f" 2>/dev/null && s=$((s + a))
    done
    echo "$s"
}

# window CMD...: start CMD (a probe at 100 Hz whose count ends it 1.3 s after the window at the
# latest), let it settle 0.7 s, print its CPU time per probe in µs over the next WIN s, then stop it
# (by its PID, kept in WPID meanwhile for the exit's clean-up).
window() {
    "$@" >/dev/null 2>&1 &
    WPID=$!
    local a z
    sleep 0.7
    a=$(ns_of "$WPID")
    sleep "$WIN"
    z=$(ns_of "$WPID")
    kill "$WPID" 2>/dev/null || true
    wait "$WPID" 2>/dev/null || true
    WPID=
    awk -v d=$((z - a)) -v n=$((WIN * 100)) 'BEGIN { printf "%.1f\n", d / n / 1000 }'
}

# per_window KIND ADDR: prints "perflab_us anchor_us" from one window of each, one after the other.
per_window() {
    local kind=$1 addr=$2 n=$(((WIN + 2) * 100))
    commands "$kind" "$addr"
    window "$PERFLAB" probe "${OURS[@]}" -i 10ms -q -c "$n" >"$T/window.p"
    window "${ANCHOR[@]}" "$n" 10000 >"$T/window.a"
    echo "$(cat "$T/window.p") $(cat "$T/window.a")"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# verdict: stdin "perflab_us anchor_us" per round; the goal's verdict on the rounds' ratios and the
# distribution-free interval for their median (bench/median_interval.sh).
# shellcheck source=bench/median_interval.sh
. "$ROOT/bench/median_interval.sh"
verdict() {
    local ratios
    ratios=$(awk '$2 > 0 { print $1 / $2 }')
    if [ "$(printf '%s\n' "$ratios" | grep -c .)" -lt 2 ]; then
        echo "one round:"
        return
    fi
    # Under 5 rounds the whole range holds the median with less than 90 %: no verdict.
    printf '%s\n' "$ratios" | interval | awk '{
        v = ($4 < 90 ? "too few rounds for a verdict" : $3 <= 1.10 ? "met" : $2 > 1.10 ? "missed" : "undecided")
        printf "%s: paired ratio %.2f [%.2f-%.2f, %.0f %%],", v, $1, $2, $3, $4 }'
}

# path NAME ADDR: the table of part 1 for one path.
path() {
    local name=$1 addr=$2 k r
    echo
    echo "1. CPU per probe, $name ($addr), at 100 Hz: udp, tcp, http in $WINDOWS alternating rounds of"
    echo "   ${WIN}-s steady-state windows; icmp, command in $REPS alternating rounds of runs (N2 $N2 − N1 $N1 probes)"
    printf '%-8s %12s %12s %7s %13s %12s\n' kind "perflab µs" "anchor µs" ratio "ratio range" "load"
    echo "(goal per kind: ratio ≤ 1.10; µs the medians of the rounds. The verdict's interval, the k-th smallest to"
    echo " the k-th largest of the rounds' paired ratios, holds their median with the confidence given (k the largest"
    echo " with >= 90 %; 5 rounds: the whole range, 94 %): met when it lies at or under 1.10, missed when above, else"
    echo " undecided)"
    local tp=0 ta=0
    for k in $KINDS; do
        : >"$T/$k.runs"
        : >"$T/$k.loads"
        local rounds=$REPS measure=per_probe
        if windowed "$k"; then
            rounds=$WINDOWS
            measure=per_window
        fi
        for r in $(seq "$rounds"); do
            "$measure" "$k" "$addr" >>"$T/$k.runs"
            cut -d' ' -f1 /proc/loadavg >>"$T/$k.loads"
        done
        local p a
        p=$(awk '{ print $1 }' "$T/$k.runs" | median)
        a=$(awk '{ print $2 }' "$T/$k.runs" | median)
        local anchor_name="probe_anchor $k"
        [ "$k" = icmp ] && anchor_name="ping -i 0.01"
        [ "$AS_PERFLAB" = 0 ] || [ "$k" = icmp ] || anchor_name="probe_anchor $k, perflab's system calls"
        [ -z "$AGAINST" ] || anchor_name="$AGAINST"
        local range
        range=$(awk '$2 > 0 { r = $1 / $2; if (n++ == 0 || r < lo) lo = r; if (n == 1 || r > hi) hi = r } END { printf "%.2f-%.2f", lo, hi }' "$T/$k.runs")
        printf '%-8s %12s %12s %7s %13s %12s   %s (anchor: %s)\n' "$k" "$p" "$a" \
            "$(awk -v p="$p" -v a="$a" 'BEGIN { printf "%.2f", (a > 0 ? p / a : 0) }')" "$range" \
            "$(sort -g "$T/$k.loads" | sed -n '1p;$p' | paste -sd- -)" \
            "$(verdict <"$T/$k.runs")" \
            "$anchor_name"
        tp=$(awk -v t="$tp" -v x="$p" 'BEGIN { print t + x }')
        ta=$(awk -v t="$ta" -v x="$a" 'BEGIN { print t + x }')
    done
    awk -v tp="$tp" -v ta="$ta" 'BEGIN {
        # µs per probe × 100 probes/s = µs per s; / 1e4 = % of one core.
        printf "the kinds above at 100 Hz: perflab %.3f %% of one core, anchors %.3f %%, ratio %.2f; goal < 1 %%: %s\n",
            tp / 100, ta / 100, (ta > 0 ? tp / ta : 0), (tp / 100 < 1 ? "met" : "NOT met")
        printf "perflab above its anchors: %.3f %% of a core for them\n", (tp - ta) / 100
    }'
}

echo "probe cost — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(uname -r)"
echo "$("$PERFLAB" --version), $(ping -V 2>&1 | head -1)"
IRQ_ACC=$( { zcat /proc/config.gz 2>/dev/null || cat "/boot/config-$(uname -r)" 2>/dev/null; } | grep -E '^(# )?CONFIG_IRQ_TIME_ACCOUNTING' || echo "unknown")
echo "kernel: $IRQ_ACC (not set: softirq work done in a task's context is that task's system time)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

serve_at 127.0.0.1 "$T/serve.out"
path loopback 127.0.0.1

if [ "$NETNS" = 1 ]; then
    # The route first: until the pair is addressed, nothing of the subnet may go anywhere.
    ip route add unreachable "$SUBNET"
    ROUTE=1
    ip netns add "$NS"
    ip link add "$VA" type veth peer name "$VB"
    ip link set "$VB" netns "$NS"
    ip addr add 198.18.17.1/30 dev "$VA"
    ip link set "$VA" up
    ip -n "$NS" addr add "$PEER/30" dev "$VB"
    ip -n "$NS" link set lo up
    ip -n "$NS" link set "$VB" up
    ping -q -c 1 -W 2 "$PEER" >/dev/null || { echo "probe_cost.sh: the namespace peer $PEER does not answer" >&2; exit 1; }
    serve_at "$PEER" "$T/serve_ns.out" ip netns exec "$NS"
    path "veth to a peer in a network namespace" "$PEER"
fi

# Part 2: the latency comparison, quiet but for these two.
N=$((DUR * 5 - 5))
ping -i 0.2 -c "$N" 127.0.0.1 >"$T/ping.out" 2>&1 &
PIDS+=($!)
PING=$!
sleep 0.1
"$PERFLAB" probe icmp 127.0.0.1 -i 200ms -c "$N" --json >"$T/icmp5.json" 2>"$T/icmp5.err" || true
wait "$PING" || true

echo
echo "2. icmp latency beside iputils ping, both every 200 ms to 127.0.0.1 over the same ${DUR} s, sends 100 ms apart"
OURS=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["summary"]; print(s["rtt"]["median_ms"], s["replies"], s["n"], d["detail"] + "; %d timeouts, %d errors, %d late, %d skipped" % (s["timeouts"], s["errors"], d["late"], d["skipped"]))' "$T/icmp5.json")
OUR_MED=$(echo "$OURS" | awk '{ print $1 }')
PING_MED=$(grep -o 'time=[0-9.]*' "$T/ping.out" | cut -d= -f2 | median)
PING_N=$(grep -c 'time=' "$T/ping.out" || true)
echo "perflab probe icmp: median $(awk -v m="$OUR_MED" 'BEGIN { printf "%.4f", m }') ms over $(echo "$OURS" | awk '{ print $2 "/" $3 }') replies ($(echo "$OURS" | cut -d' ' -f4-))"
echo "ping -i 0.2:        median ${PING_MED} ms over ${PING_N}/${N} replies ($(tail -1 "$T/ping.out"))"
awk -v a="$OUR_MED" -v b="$PING_MED" 'BEGIN {
    d = (a - b) * 1000; r = a / b; ok = r >= 0.95 && r <= 1.05
    printf "ratio perflab/ping %.3f, difference %+.1f us; goal within 5 %%: %s\n", r, d, (ok ? "met" : "NOT met")
}'
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
