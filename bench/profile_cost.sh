#!/usr/bin/env bash
# What on-CPU profiling costs the system under test, and what the report's flame graphs cost:
#   1. `perflab serve` under `perflab http` (closed model), ROUNDS alternating rounds without and with
#      `perflab profile --pid SERVE -F 49` recording during the load. Goal: throughput with ≥ 0.97 ×
#      without (the median of each). Printed with it: perf's own CPU (% of one core) while it
#      recorded (perf wakes only when its buffer fills: the sampling itself is charged to the target,
#      in its throughput), the samples taken, and the machine's load (load average, other processes'
#      CPU) during the rounds: the machine may be shared.
#   2. A run of a plan with `[profile] on_cpu = true` at 2 points, then `perflab report` of it timed
#      with and without its profiles (the same run, its profile rows deleted from a copy). Goal: the
#      flame graphs, top frames and differential add ≤ 1 s per point.
#
#   bench/profile_cost.sh            # 5 rounds of 10 s each way
#   bench/profile_cost.sh --quick    # 3 rounds of 4 s
#   options: --rounds N --duration S --connections C
#
# Needs perf (linux-perf) usable by this user (root, or perf_event_paranoid ≤ 1). PERFLAB=path runs
# another binary than target/release/perflab.
set -euo pipefail

ROUNDS=5
DUR=10
CONN=8
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) ROUNDS=3; DUR=4 ;;
        --rounds) ROUNDS="$2"; shift ;;
        --duration) DUR="$2"; shift ;;
        --connections) CONN="$2"; shift ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "profile_cost.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PERFLAB="${PERFLAB:-$ROOT/target/release/perflab}"
if [ ! -x "$PERFLAB" ]; then
    echo "building the release binary"
    (cd "$ROOT" && cargo build --release -q)
fi
if ! command -v perf >/dev/null; then
    echo "profile_cost.sh: perf is not installed (apt-get install linux-perf)" >&2
    exit 1
fi
T="$(mktemp -d /tmp/perflab-profilecost.XXXXXX)"
SERVE=""
cleanup() {
    [ -n "$SERVE" ] && kill "$SERVE" 2>/dev/null && wait "$SERVE" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
TCK=$(getconf CLK_TCK)
NCPU=$(nproc)

ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# All CPUs' busy ticks (user+nice+system+irq+softirq+steal) from /proc/stat.
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$PERFLAB" serve --port "$PORT" --workers 2 >/dev/null 2>&1 &
SERVE=$!
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done

echo "== perflab serve under perflab http (c=$CONN, ${DUR} s per round), $ROUNDS rounds each way =="
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-8s %12s %14s %16s %10s\n' round profile 'req/s' 'perf_cpu_pct' 'others_cpu_pct' 'samples'
for r in $(seq "$ROUNDS"); do
    for mode in off on; do
        PROF=""
        if [ "$mode" = on ]; then
            "$PERFLAB" profile --pid "$SERVE" -F 49 -d "$((DUR + 30))s" --folded -o "$T/r$r.folded" 2>"$T/prof$r.log" &
            PROF=$!
            # perf is ready once it recorded its first event window: wait for its process.
            for _ in $(seq 100); do PERF=$(pgrep -P "$PROF" -x perf || true); [ -n "$PERF" ] && break; sleep 0.05; done
            sleep 1
        fi
        PERF=$([ -n "$PROF" ] && pgrep -P "$PROF" -x perf || true)
        P0=$([ -n "$PERF" ] && ticks "$PERF" || echo 0)
        S0=$(ticks "$SERVE"); B0=$(busy)
        OUT=$("$PERFLAB" http "http://127.0.0.1:$PORT/bytes/1000" -c "$CONN" -d "${DUR}s" --json 2>/dev/null)
        S1=$(ticks "$SERVE"); B1=$(busy)
        P1=$([ -n "$PERF" ] && ticks "$PERF" || echo 0)
        SAMPLES=-
        if [ -n "$PROF" ]; then
            kill -INT "$PROF"; wait "$PROF" || true
            SAMPLES=$(awk '{ s += $NF } END { print s + 0 }' "$T/r$r.folded")
        fi
        RPS=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests_per_s"])')
        echo "$mode $RPS" >> "$T/rps"
        # Other processes: all busy CPU less the server's and perf's (perflab http's own is in it too).
        awk -v r="$r" -v m="$mode" -v rps="$RPS" -v p="$((P1 - P0))" -v s="$((S1 - S0))" -v b="$((B1 - B0))" \
            -v t="$TCK" -v d="$DUR" -v n="$NCPU" -v k="$SAMPLES" \
            'BEGIN { printf "%-6s %-8s %12.0f %14.3f %16.1f %10s\n", r, m, rps, p / t / d * 100, (b - s - p) / t / d * 100, k }'
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$T/rps" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
off = [float(v) for m, v in rows if m == "off"]
on = [float(v) for m, v in rows if m == "on"]
ratio = statistics.median(on) / statistics.median(off)
print(f"median req/s without {statistics.median(off):.0f}, with profiling {statistics.median(on):.0f}: "
      f"ratio {ratio:.3f} (goal >= 0.97: {'met' if ratio >= 0.97 else 'NOT met'})")
EOF

echo
echo "== report time with and without the flame graphs (2 points) =="
HOT="$T/hot"
cat > "$T/hot.c" <<'EOF'
#include <stdint.h>
#include <string.h>
volatile uint64_t sink;
__attribute__((noinline)) void hot_function(uint64_t n) { for (uint64_t i = 0; i < n; i++) sink += i; }
__attribute__((noinline)) void cold_function(uint64_t n) { for (uint64_t i = 0; i < n; i++) sink += i; }
int main(int argc, char **argv) { uint64_t h = argc > 1 && strcmp(argv[1], "double") == 0 ? 100000 : 50000;
  for (uint64_t k = 0; k < 2000000; k++) { hot_function(h); cold_function(50000); } return 0; }
EOF
if ! gcc -O1 -fno-omit-frame-pointer -fno-inline -o "$HOT" "$T/hot.c"; then
    echo "skipped: gcc is not installed"
    exit 0
fi
cat > "$T/plan.toml" <<EOF
name = "profile-cost"
[matrix]
build = ["base", "double"]
[target]
command = "$HOT \${build}"
[workload]
type = "exec"
command = "sleep 5"
[phases]
baseline = "0s"
warmup = "0s"
load = "5s"
recovery = "0s"
[report]
compare = "build"
baseline = "base"
[profile]
on_cpu = true
frequency = 99
EOF
"$PERFLAB" run --quiet --runs-dir "$T/runs" "$T/plan.toml" >/dev/null
RUN=$(ls -d "$T"/runs/*)
cp -r "$RUN" "$T/without"
sqlite3 "$T/without/perflab.db" "DELETE FROM profile" 2>/dev/null || python3 -c "
import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('DELETE FROM profile'); c.commit()" "$T/without/perflab.db"
best() { # the best of 3 wall times of `perflab report DIR --out OUT`
    local b=999
    for _ in 1 2 3; do
        local s e
        s=$(date +%s.%N); "$PERFLAB" report "$1" --out "$T/out" >/dev/null; e=$(date +%s.%N)
        b=$(awk -v b="$b" -v d="$(awk -v s="$s" -v e="$e" 'BEGIN { print e - s }')" 'BEGIN { print (d < b) ? d : b }')
    done
    echo "$b"
}
W=$(best "$RUN"); WO=$(best "$T/without")
awk -v w="$W" -v wo="$WO" 'BEGIN { d = (w - wo) / 2;
    printf "perflab report: %.3f s with the profiles, %.3f s without: %.1f ms per point (goal <= 1 s: %s)\n",
           w, wo, 1000 * d, (d <= 1) ? "met" : "NOT met" }'
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
