#!/usr/bin/env bash
# How the store and the report scale with the size of an experiment. Two synthetic runs of an exec
# workload (`sleep`), no target:
#   fast: TRIALS trials (default 400: 20 points × 20 repetitions) sampling every 10 ms, phases
#         baseline 0.5 s, load 1 s, recovery 0.5 s: about 201 samples per trial;
#   slow: SLOW_TRIALS trials (default 4) sampling every 1 s, with a long experiment's phases scaled
#         down 20× (baseline 15 s, load 30 s, recovery 6 s).
# For each it prints: sampled values stored, database bytes per sampled value, the run's peak RSS
# when its 10th trial was stored, when its last was, and at its end (including the end-of-run
# report), then the time and peak RSS of `perflab report` on the finished run and the size of the
# report directory. Beside each peak it prints the anonymous part of the run's memory (RssAnon: the
# heap, polled; the rest of RSS is the binary's own pages, which vary with the page cache), and
# beside the report's wall time its CPU time (user + sys) and the load average: a wall time much
# longer than the CPU time on a loaded machine is the wait for a CPU.
#
#   bench/store_scale.sh                      # the full 400 trials (about 15 minutes)
#   TRIALS=60 bench/store_scale.sh            # fewer trials (a multiple of 20 is not needed)
#   SLOW_TRIALS=0 bench/store_scale.sh        # skip the 1 s run
#   KEEP=1 bench/store_scale.sh               # keep the run directories (printed)
#   PERFLAB=/path/to/perflab bench/store_scale.sh   # measure another build
#
# Peak RSS is VmHWM of /proc/PID/status (polled every 0.1 s while the run goes on, read when the
# store holds 10 trials) and /usr/bin/time -v's "Maximum resident set size" at the end.
set -euo pipefail

TRIALS=${TRIALS:-400}
SLOW_TRIALS=${SLOW_TRIALS:-4}
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PERFLAB="${PERFLAB:-$ROOT/target/release/perflab}"
for tool in sqlite3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "store_scale.sh: needs $tool (apt-get install sqlite3 time)" >&2; exit 2; }
done
[ -x "$PERFLAB" ] || (cd "$ROOT" && cargo build --release --quiet)

WORK="$(mktemp -d "${TMPDIR:-/tmp}/perflab-store-scale.XXXXXX")"
cleanup() { [ "${KEEP:-0}" = 1 ] && echo "kept $WORK" || rm -rf "$WORK"; }
trap cleanup EXIT

# plan NAME TRIALS INTERVAL BASELINE LOAD_S RECOVERY
plan() {
    local name=$1 trials=$2 interval=$3 baseline=$4 load_s=$5 recovery=$6
    local points=$(( trials < 20 ? trials : 20 ))
    local reps=$(( (trials + points - 1) / points ))
    local list
    list=$(seq -s, 1 "$points")
    cat >"$WORK/$name.toml" <<EOF
name = "$name"
repetitions = $reps
order = "sequential"

[workload]
type = "exec"
command = "sleep $load_s; echo \${n} >/dev/null"
adapter = "none"

[matrix]
n = [$list]

[phases]
baseline = "$baseline"
warmup = "0s"
load = "${load_s}s"
recovery = "$recovery"
interval = "$interval"
EOF
}

kb() { awk '/VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null || true; }
anon() { awk '/RssAnon/ {print $2}' "/proc/$1/status" 2>/dev/null || true; }

# measure NAME: run the plan, watching the peak RSS at trial 10; then the report.
measure() {
    local name=$1
    local out="$WORK/out-$name"
    mkdir -p "$out"
    (cd "$WORK" && /usr/bin/time -v -o "$out/run.time" "$PERFLAB" run --quiet "$name.toml" >"$out/run.log" 2>&1) &
    local bg=$! pid="" rss10="" rsslast="" db="" planned anon10="" anonlast="" anonend=0
    planned=$(awk '/^repetitions/ {r=$3} /^n = / {gsub(/[^,]/, "", $0); p=length($0)+1} END {print r*p}' "$WORK/$name.toml")
    while kill -0 "$bg" 2>/dev/null; do
        # perflab is the only child of /usr/bin/time, which is the only child of the subshell.
        [ -n "$pid" ] || pid=$(pgrep -P "$(pgrep -P "$bg" | head -1 || echo 0)" | head -1 || true)
        [ -n "$db" ] || db=$(ls -d "$WORK"/runs/*-"$name"/perflab.db 2>/dev/null | head -1 || true)
        if [ -z "$rss10" ] && [ -n "$pid" ] && [ -n "$db" ]; then
            local n
            n=$(sqlite3 "file:$db?mode=ro" "SELECT count(*) FROM trial" 2>/dev/null || echo 0)
            [ "${n:-0}" -ge 10 ] && rss10=$(kb "$pid") && anon10=$(anon "$pid")
        fi
        # The last trial stored, before the end-of-run report.
        if [ -n "$rss10" ] && [ -z "$rsslast" ]; then
            local m
            m=$(sqlite3 "file:$db?mode=ro" "SELECT count(*) FROM trial" 2>/dev/null || echo 0)
            [ "${m:-0}" -ge "$planned" ] && rsslast=$(kb "$pid") && anonlast=$(anon "$pid")
        fi
        # After the last trial: the end of the run and its report.
        if [ -n "$rsslast" ]; then
            local a
            a=$(anon "$pid")
            [ "${a:-0}" -gt "$anonend" ] && anonend=$a
        fi
        sleep 0.1
    done
    wait "$bg" || { echo "run $name failed:"; tail -5 "$out/run.log"; return 1; }
    local dir
    dir=$(ls -d "$WORK"/runs/*-"$name" | head -1)
    db="$dir/perflab.db"
    local bytes values
    bytes=$(stat -c %s "$db")
    values=$(sqlite3 "$db" "SELECT value FROM meta WHERE key = 'schema_version'" | {
        read -r v
        if [ "$v" -ge 3 ]; then sqlite3 "$db" "SELECT coalesce(sum(n_values), 0) FROM sample_series"
        else sqlite3 "$db" "SELECT count(*) FROM sample"; fi
    })
    local run_peak
    run_peak=$(awk -F': ' '/Maximum resident/ {print $2}' "$out/run.time")
    rm -rf "$out/report"
    /usr/bin/time -v -o "$out/report.time" "$PERFLAB" report "$dir" --out "$out/report" >/dev/null 2>&1
    local rep_s rep_kb rep_size trials rep_cpu load
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    rep_s=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$out/report.time")
    rep_cpu=$(awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {printf "%.2f", u + s}' "$out/report.time")
    rep_kb=$(awk -F': ' '/Maximum resident/ {print $2}' "$out/report.time")
    rep_size=$(du -sk "$out/report" | cut -f1)
    trials=$(sqlite3 "$db" "SELECT count(*) FROM trial")
    echo "== $name: $trials trials"
    echo "sampled values stored : $values"
    echo "database              : $bytes bytes, $(awk -v b="$bytes" -v n="$values" 'BEGIN { printf "%.2f", (n > 0 ? b / n : 0) }') bytes per sampled value"
    # The sample tables on their own (SQLite's dbstat: pages of each table), what the dry run's
    # projection is made of: bytes per value in sample_series, per sample in sample_clock, per
    # trial and metric in phase_summary.
    sqlite3 "$db" "SELECT (SELECT sum(pgsize) FROM dbstat WHERE name = 'sample_series'),
                          (SELECT sum(pgsize) FROM dbstat WHERE name = 'sample_clock'),
                          (SELECT sum(pgsize) FROM dbstat WHERE name = 'phase_summary'),
                          (SELECT sum(n_samples) FROM sample_clock), (SELECT count(*) FROM phase_summary)" 2>/dev/null |
        awk -F'|' -v n="$values" 'NF == 5 && n > 0 && $4 > 0 && $5 > 0 {
            printf "sample tables         : sample_series %.2f bytes per value, sample_clock %.1f bytes per sample, phase_summary %.0f bytes per trial and metric\n", $1 / n, $2 / $4, $3 / $5 }' || true
    echo "run peak RSS          : at trial 10 ${rss10:-?} KiB, at the last trial ${rsslast:-?} KiB, at the end $run_peak KiB (end-of-run report included)"
    echo "run anonymous RSS     : at trial 10 ${anon10:-?} KiB, at the last trial ${anonlast:-?} KiB, highest seen after it ${anonend} KiB"
    echo "perflab report        : $rep_s wall, ${rep_cpu} s user+sys (load average $load), peak RSS $rep_kb KiB, report directory $rep_size KiB"
    [ "${KEEP:-0}" = 1 ] && echo "run directory         : $dir"
    return 0
}

plan fast "$TRIALS" 10ms 500ms 1 500ms
measure fast
if [ "$SLOW_TRIALS" -gt 0 ]; then
    plan slow "$SLOW_TRIALS" 1s 15s 30 6s
    measure slow
fi

# The dry run's projection for an hour-long experiment: 240 trials of 5 min baseline, 10 min load
# and 2 min recovery (1 021 samples at 1 s), sampled every 10 ms (its warning gives the 1 s figure).
plan seed 240 10ms 5m 600 2m
echo "== projection (perflab run --dry-run), 240 trials of 17 minutes"
(cd "$WORK" && "$PERFLAB" run --dry-run seed.toml | grep '^warning: sampling') || echo "(no projection printed)"

