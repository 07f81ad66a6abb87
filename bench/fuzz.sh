#!/usr/bin/env bash
# The fuzz harnesses, each run for MINUTES minutes (default 1) instead of the few seconds
# `cargo test` gives them: every tool adapter's parser (tests/it/fuzz_adapters.rs), the plan parser
# (tests/it/fuzz_plan.rs) and the HTTP response parser (src/workload/http/response_fuzz.rs).
#
#   bench/fuzz.sh 2          # 2 minutes per target (12 targets: about 25 minutes)
#   bench/fuzz.sh 0.1        # a 6 s smoke run per target
#   PERFLAB_FUZZ_SEED=N bench/fuzz.sh 2    # another seed (default: the time; printed)
#
# Each target runs rounds of cases (PERFLAB_FUZZ_SECS, read by the tests) until its time is up and
# prints "fuzz TARGET: N cases in S s, 0 failures"; a failure prints the smallest failing input
# proptest finds and the seed and round that reproduce it. Exit status 1 if any target failed.
set -euo pipefail

case "${1:-1}" in
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
esac
MINUTES="${1:-1}"
SECS=$(awk -v m="$MINUTES" 'BEGIN { s = m * 60; if (s <= 0) exit 1; print s }') || {
    echo "fuzz.sh: MINUTES must be a positive number, not '$MINUTES'" >&2
    exit 2
}
SEED="${PERFLAB_FUZZ_SEED:-$(date +%s)}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

echo "fuzz.sh: $MINUTES min per target, PERFLAB_FUZZ_SEED=$SEED"
cargo test --release --no-run --lib --test it >/dev/null 2>&1 || cargo test --release --no-run --lib --test it

# kind (lib | it) and the test's full name.
TARGETS=(
    "lib workload::http::response::fuzz::a_response_split_anywhere_parses_as_in_one_read"
    "lib workload::http::response::fuzz::arbitrary_bytes_split_anywhere_parse_as_in_one_read"
    "it fuzz_plan::plans_never_panic_and_errors_are_one_located_line"
    "it fuzz_adapters::fio"
    "it fuzz_adapters::iperf3"
    "it fuzz_adapters::stress_ng_text"
    "it fuzz_adapters::stress_ng_yaml"
    "it fuzz_adapters::memtester"
    "it fuzz_adapters::sysbench"
    "it fuzz_adapters::pgbench"
    "it fuzz_adapters::ab"
    "it fuzz_adapters::wrk"
)

LOG="$(mktemp -t perflab-fuzz.XXXXXX)"
trap 'rm -f "$LOG"' EXIT
failed=0
for t in "${TARGETS[@]}"; do
    kind="${t%% *}"
    name="${t#* }"
    if [ "$kind" = lib ]; then sel=(--lib); else sel=(--test it); fi
    if PERFLAB_FUZZ_SECS="$SECS" PERFLAB_FUZZ_SEED="$SEED" RUST_BACKTRACE=0 \
        cargo test --release -q "${sel[@]}" "$name" -- --exact --nocapture --test-threads 1 >"$LOG" 2>&1; then
        grep -E '^fuzz ' "$LOG" || echo "fuzz $name: ran (no summary line)"
    else
        failed=1
        echo "FAILED: $name"
        grep -E '^fuzz |minimal failing input' -A40 "$LOG" | head -60
    fi
done
exit "$failed"
