#!/usr/bin/env bash
# What watching a run live costs it: the same http plan (loopback, `perflab serve` as the target,
# closed model, 2 connections, one trial) run plainly, with `--live` and a client reading /events
# (curl -N, as a page would), and with `--tui` (under tmux, 4 frames a second), in alternating
# rounds. Per mode, the medians over the rounds of:
#   - the load generator's throughput (the trial's requests_per_s), and its ratio to the plain run's
#     (goal >= 0.99);
#   - perflab's own CPU under load (proc_loadgen_cpu_pct, % of one core: its load workers and,
#     with --live/--tui, the server, the feed and the view), and the extra over the plain run's,
#     scaled to the same throughput (goal <= 1 % of a core);
#   - the event log's share of the store (its rows' bytes against the store's, after VACUUM).
# The machine's load average is printed before each round: a busy machine moves every figure.
# With perf, the views' own threads' CPU time is counted apart (exact, whatever the load's noise).
# Then the paired figures: each mode against the plain run of its own round, their median and a
# distribution-free interval for it (how precisely the rounds pin the ratio down).
#
#   bench/live_cost.sh             # 5 rounds of 20 s of load
#   bench/live_cost.sh --quick     # 2 rounds of 5 s
#   bench/live_cost.sh --pin       # perflab (and the page's reader, tmux) on CPU 0, the target on
#                                  # CPU 1 (taskset): the scheduler's placement of their threads no
#                                  # longer moves the figures, and what the views cost comes out of
#                                  # the load generator's core
#   options: --rounds N --load S
set -euo pipefail

ROUNDS=5
LOAD=20
PIN=0
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) ROUNDS=2; LOAD=5 ;;
        --rounds) ROUNDS="$2"; shift ;;
        --load) LOAD="$2"; shift ;;
        --pin) PIN=1 ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        *) echo "live_cost.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
HAVE_PERF=0
command -v perf >/dev/null && perf stat -e task-clock true >/dev/null 2>&1 && HAVE_PERF=1
for tool in curl tmux sqlite3 taskset bc; do
    command -v "$tool" >/dev/null || { echo "live_cost.sh: needs $tool" >&2; exit 2; }
done

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PERFLAB="$ROOT/target/release/perflab"
if [ ! -x "$PERFLAB" ]; then
    echo "building the release binary"
    (cd "$ROOT" && cargo build --release -q)
fi
T="$(mktemp -d /tmp/perflab-livecost.XXXXXX)"
SOCK="$T/tmux.sock"
CURL=""
cleanup() {
    [ -n "$CURL" ] && kill "$CURL" 2>/dev/null
    [ -n "$PERF" ] && kill "$PERF" 2>/dev/null
    tmux -S "$SOCK" kill-server 2>/dev/null || true
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# With --pin: the prefix of perflab's command and of the views' other ends (the page's reader, tmux),
# all on CPU 0; the target's, on CPU 1 (where nothing else runs).
P=()
TARGET_PIN=""
if [ "$PIN" = 1 ]; then
    P=(taskset -c 0)
    TARGET_PIN='"taskset", "-c", "1", '
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

plan() { # $1: target port
    cat <<PLAN
name = "live-cost"
repetitions = 1

[target]
command = [$TARGET_PIN"$PERFLAB", "serve", "--port", "$1", "--model", "pool", "--workers", "2"]
ready = { tcp = "127.0.0.1:$1", timeout = "10s" }
stop = { signal = "SIGTERM", grace = "3s" }

[workload]
type = "http"
url = "http://127.0.0.1:$1/bytes/100"
connections = 2

[phases]
baseline = "1s"
warmup = "1s"
load = "${LOAD}s"
recovery = "1s"
interval = "1s"
PLAN
}

# The CPU time of each thread of process $1 until it exits (perf stat --per-thread, software
# task-clock), into $T/threads.csv: the views' own threads (`perflab-live*`, `perflab-feed`,
# `perflab-tui`) are named, so what they cost is counted exactly, apart from the load's noise.
PERF=""
# perf counts a thread apart only if it exists when perf attaches (a thread started later is
# counted into its parent's), so this waits for the view's thread ($2) first.
threads_of() {
    [ "$HAVE_PERF" = 1 ] && [ -n "$1" ] || return 0
    for _ in $(seq 100); do
        grep -qx "$2" /proc/"$1"/task/*/comm 2>/dev/null && break
        sleep 0.05
    done
    perf stat --per-thread -e task-clock -x, -o "$T/threads.csv" -p "$1" > /dev/null 2>&1 &
    PERF=$!
}

# One run in mode $1 (plain, live, tui); prints "rps cpu_pct log_bytes store_bytes views_ms wall_s":
# views_ms is the views' threads' CPU time (0 for plain, or without perf), wall_s the run's time.
run_once() {
    local began; began=$(date +%s.%N)
    local mode=$1 runs="$T/runs-$1-$2" p="$T/plan-$1-$2.toml"
    plan "$(free_port)" > "$p"
    case "$mode" in
        plain) "${P[@]}" "$PERFLAB" run --quiet --runs-dir "$runs" "$p" > /dev/null ;;
        live)
            local lp; lp=$(free_port)
            "${P[@]}" "$PERFLAB" run --quiet "--live=127.0.0.1:$lp" --runs-dir "$runs" "$p" > /dev/null 2>&1 &
            local pid=$!
            for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$lp/" && break; sleep 0.1; done
            threads_of "$pid" perflab-live
            "${P[@]}" curl -s -N "http://127.0.0.1:$lp/events" > "$T/events.txt" &
            CURL=$!
            wait "$pid"
            kill "$CURL" 2>/dev/null || true; wait "$CURL" 2>/dev/null || true; CURL=""
            ;;
        tui)
            rm -f "$T/rc"
            "${P[@]}" tmux -S "$SOCK" new-session -d -x 120 -y 40 \
                "${P[*]} '$PERFLAB' run --tui --runs-dir '$runs' '$p'; echo \$? > '$T/rc'"
            local pane=""
            for _ in $(seq 50); do
                pane=$(tmux -S "$SOCK" list-panes -F '#{pane_pid}' 2>/dev/null | head -1)
                [ -n "$pane" ] && pgrep -P "$pane" >/dev/null && break
                sleep 0.1
            done
            threads_of "$(pgrep -P "$pane" | head -1)" perflab-tui
            while [ ! -s "$T/rc" ]; do sleep 0.2; done
            ;;
    esac
    local views=0
    if [ -n "$PERF" ]; then
        wait "$PERF" 2>/dev/null || true
        PERF=""
        views=$(awk -F, '$1 ~ /^ *perflab-(live|feed|tui)/ { s += $2 } END { printf "%.3f", s + 0 }' "$T/threads.csv")
    fi
    local db; db=$(ls "$runs"/*/perflab.db | head -1)
    cp "$db" "$T/v.db"
    sqlite3 "$T/v.db" "VACUUM;"
    local rps cpu log store
    rps=$(sqlite3 "$T/v.db" "SELECT value FROM metric WHERE name = 'requests_per_s';")
    cpu=$(sqlite3 "$T/v.db" "SELECT s.under_load FROM phase_summary s JOIN metric_dict d ON d.id = s.metric_id WHERE d.name = 'proc_loadgen_cpu_pct';")
    log=$(sqlite3 "$T/v.db" "SELECT SUM(LENGTH(body) + LENGTH(kind) + 24) FROM event;")
    store=$(stat -c %s "$T/v.db")
    echo "$rps $cpu $log $store $views $(echo "$(date +%s.%N) - $began" | bc -l)"
}

# Each round runs the three modes one after the other, in an order that rotates from round to round
# (a drift of the machine within a round then favours no mode); a mode's ratio is taken within its
# round (paired), so the slow drift between rounds cancels.
declare -A R
ORDERS=("plain live tui" "live tui plain" "tui plain live")
for i in $(seq "$ROUNDS"); do
    order=${ORDERS[$(( (i - 1) % 3 ))]}
    echo "round $i of $ROUNDS ($order): load average $(cut -d' ' -f1-3 /proc/loadavg)"
    for mode in $order; do
        R[$mode]+="$(run_once "$mode" "$i")"$'\n'
    done
done

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
col() { printf '%s' "${R[$1]}" | awk -v c="$2" 'NF { print $c }' | median; }

base_rps=$(col plain 1); base_cpu=$(col plain 2)
echo
pinned=""
[ "$PIN" = 1 ] && pinned=", perflab on CPU 0 and the target on CPU 1"
echo "== medians of $ROUNDS rounds, ${LOAD} s of load each (closed model, 2 connections, loopback$pinned) =="
printf '%-6s %12s %8s %14s %18s %12s\n' mode req/s ratio perflab_cpu_% extra_cpu_%_core log_share_%
for mode in plain live tui; do
    rps=$(col "$mode" 1); cpu=$(col "$mode" 2)
    share=$(printf '%s' "${R[$mode]}" | awk 'NF { print 100 * $3 / $4 }' | median)
    awk -v m="$mode" -v r="$rps" -v c="$cpu" -v br="$base_rps" -v bc="$base_cpu" -v s="$share" 'BEGIN {
        printf "%-6s %12.0f %8.4f %14.1f %18.2f %12.2f\n", m, r, r / br, c, c - bc * r / br, s }'
done

# The paired figures: per round, the mode's throughput over the plain run's of the same round, and
# its extra CPU (% of a core, the plain run's scaled to the same throughput). Their median with a
# distribution-free interval: the k-th smallest and k-th largest of n rounds bound the median with
# probability 1 - 2 P(Binomial(n, 1/2) < k); k is the largest with that probability >= 90 %.
paired() { # $1: mode; prints "ratio extra" per round
    paste <(printf '%s' "${R[plain]}" | awk 'NF') <(printf '%s' "${R[$1]}" | awk 'NF') |
        awk '{ printf "%.6f %.4f\n", $7 / $1, $8 - $2 * $7 / $1 }'
}
# shellcheck source=bench/median_interval.sh
. "$ROOT/bench/median_interval.sh"
echo
echo "== paired per round: median [interval] (distribution-free, confidence in brackets) =="
printf '%-6s %34s %36s\n' mode "throughput / plain's" "extra CPU, % of a core"
for mode in live tui; do
    read -r rm rl rh rc < <(paired "$mode" | awk '{ print $1 }' | interval)
    read -r cm cl ch cc < <(paired "$mode" | awk '{ print $2 }' | interval)
    printf '%-6s %10s [%s .. %s] (%s %%) %10s [%s .. %s] (%s %%)\n' "$mode" "$rm" "$rl" "$rh" "$rc" "$cm" "$cl" "$ch" "$cc"
done
if [ "$HAVE_PERF" = 1 ]; then
    echo
    echo "== the views' own threads (perflab-live*, perflab-feed, perflab-tui; perf's task-clock), % of a core over the run =="
    for mode in live tui; do
        printf '%s' "${R[$mode]}" | awk 'NF { print 100 * $5 / 1000 / $6 }' | interval |
            awk -v m="$mode" '{ printf "%-6s %8.3f [%s .. %s] (%s %%) \n", m, $1, $2, $3, $4 }'
    done
else
    echo "(perf not usable here: the views' own threads are not counted apart)"
fi
