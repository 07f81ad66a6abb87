#!/usr/bin/env bash
# A load split over 1, 2 and 3 load machines (network namespaces, each segment pinned to one
# core) against one target (`perflab serve --delay 20ms` in a namespace of its own), two ways:
# `segments`, N `perflab run --segment i/N --start-at T0` merged by `perflab merge`; `from`, one
# `perflab run` whose `[workload] from` names N hosts reached over ssh (an sshd in each load
# namespace, its agent pinned with it), merged per trial. For each N: the merged throughput against N × the throughput of one segment
# alone (goal ≥ 0.95), the launch skew between the segments (the spread of how late each began
# after the common start T0, from their stores' segment marks; goal < 10 ms), and whether the
# merged request count equals the plan's and the count the server served (exact).
#
# The target answers each request after 20 ms, so a segment's throughput is set by its
# connections and the delay, not by the 2 CPUs the segments and the target share here: what the
# ratio measures is what splitting and merging lose.
#
#   sudo bench/distributed.sh                 # both ways, N = 1 2 3, 3 rounds each
#   sudo bench/distributed.sh --reps 1        # one round
#   sudo bench/distributed.sh --mode from     # only over ssh (or: --mode segments)
#   PERFLAB=/path/to/perflab measures that build (default: target/release/perflab)
#
# Safety: the root namespace gets an `unreachable` route for the whole test subnet
# (198.18.31.0/24, the benchmarking range) before any interface is addressed; the namespaces,
# the route and the server are removed on every exit, Ctrl-C included.
set -euo pipefail

REPS=3
MODES="segments from"
while [ $# -gt 0 ]; do
    case "$1" in
        --reps) REPS="$2"; shift ;;
        --mode) MODES="$2"; shift ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)" >&2; exit 2; }
PERFLAB=${PERFLAB:-$(cd "$(dirname "$0")/.." && pwd)/target/release/perflab}
[ -x "$PERFLAB" ] || { echo "no perflab at $PERFLAB (cargo build --release)" >&2; exit 2; }

SUBNET=198.18.31.0/24
TARGET=198.18.31.100
PORT=2331
TNS=perflab-bd-t
LNS=(perflab-bd-0 perflab-bd-1 perflab-bd-2)
CONNS=20       # per segment
REQUESTS=3000  # per segment
SSH_PORT=2232
WORK=$(mktemp -d /tmp/perflab-bench-dist.XXXXXX)
SERVE_PID=
SSHD_PIDS=()

cleanup() {
    [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null || true
    for p in "${SSHD_PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
    for ns in "${LNS[@]}" "$TNS"; do ip netns del "$ns" 2>/dev/null || true; done
    ip route del unreachable "$SUBNET" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cleanup 2>/dev/null || true
WORK=$(mktemp -d /tmp/perflab-bench-dist.XXXXXX)

ip route add unreachable "$SUBNET"
ip netns add "$TNS"
ip -n "$TNS" link set lo up
ip -n "$TNS" addr add "$TARGET/32" dev lo
for k in 0 1 2; do
    ns=${LNS[$k]}
    ip netns add "$ns"
    ip link add "bdl$k" netns "$ns" type veth peer name "bdt$k" netns "$TNS"
    ip -n "$ns" addr add "198.18.31.$((4 * k + 1))/30" dev "bdl$k"
    ip -n "$TNS" addr add "198.18.31.$((4 * k + 2))/30" dev "bdt$k"
    ip -n "$ns" link set lo up
    ip -n "$ns" link set "bdl$k" up
    ip -n "$TNS" link set "bdt$k" up
    ip -n "$ns" route add "$TARGET/32" via "198.18.31.$((4 * k + 2))"
done

start_server() {
    nsenter --net=/run/netns/$TNS "$PERFLAB" serve --host 0.0.0.0 --port $PORT --delay 20ms \
        > "$WORK/serve.out" 2>/dev/null &
    SERVE_PID=$!
    for _ in $(seq 50); do
        nsenter --net=/run/netns/$TNS bash -c "exec 3<>/dev/tcp/$TARGET/$PORT" 2>/dev/null && return
        sleep 0.1
    done
    echo "the target did not start" >&2
    exit 1
}

# Stop the server; print how many requests it served.
stop_server() {
    kill -TERM "$SERVE_PID"
    for _ in $(seq 100); do kill -0 "$SERVE_PID" 2>/dev/null || break; sleep 0.05; done
    kill -0 "$SERVE_PID" 2>/dev/null && { echo "the target did not stop on SIGTERM" >&2; exit 1; }
    wait "$SERVE_PID" 2>/dev/null || true
    SERVE_PID=
    sed -n 's/^served \([0-9]*\) requests.*/\1/p' "$WORK/serve.out"
}

# An sshd in each load namespace (pinned to that segment's core: its agents inherit it), root
# logging in with a key made here; the controller runs in the target's namespace, which reaches
# every load namespace over its veth.
start_sshds() {
    ssh-keygen -q -t ed25519 -N '' -f "$WORK/host_key"
    ssh-keygen -q -t ed25519 -N '' -f "$WORK/client_key"
    cp "$WORK/client_key.pub" "$WORK/authorized_keys"
    mkdir -p /run/sshd
    local k
    for k in 0 1 2; do
        cat > "$WORK/sshd$k.conf" <<EOF
Port $SSH_PORT
ListenAddress 198.18.31.$((4 * k + 1))
HostKey $WORK/host_key
AuthorizedKeysFile $WORK/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $WORK/sshd$k.pid
LogLevel ERROR
EOF
        nsenter --net=/run/netns/${LNS[$k]} taskset -c $((k % $(nproc))) /usr/sbin/sshd -D -e -f "$WORK/sshd$k.conf" 2>/dev/null &
        SSHD_PIDS+=($!)
    done
    for k in 0 1 2; do
        for _ in $(seq 50); do
            nsenter --net=/run/netns/$TNS bash -c "exec 3<>/dev/tcp/198.18.31.$((4 * k + 1))/$SSH_PORT" 2>/dev/null && break
            sleep 0.1
        done
    done
}

# The plan of a round of N segments (with `from`, over the first N load namespaces' hosts).
write_plan() {
    local n=$1 dir=$2 from=$3 k
    cat > "$dir/plan.toml" <<EOF
name = "split"

[workload]
type = "http"
url = "http://$TARGET:$PORT/"
connections = $((CONNS * n))
requests = $((REQUESTS * n))

[phases]
baseline = "0s"
warmup = "0s"
load = "60s"
recovery = "0s"
interval = "1s"
EOF
    [ "$from" = from ] || return 0
    local names=()
    for ((k = 0; k < n; k++)); do names+=("\"n$k\""); done
    sed -i "s/^requests = .*/&\nfrom = [$(IFS=,; echo "${names[*]}")]/" "$dir/plan.toml"
    echo "[hosts]" >> "$dir/plan.toml"
    for ((k = 0; k < n; k++)); do
        echo "n$k = { ssh = \"root@198.18.31.$((4 * k + 1))\", port = $SSH_PORT, identity = \"$WORK/client_key\", perflab = \"$PERFLAB\", ssh_options = [\"StrictHostKeyChecking=no\", \"UserKnownHostsFile=/dev/null\", \"LogLevel=ERROR\"] }" >> "$dir/plan.toml"
    done
}

# One round of N segments over ssh (`from`); prints "rps skew_ms requests served".
round_from() {
    local n=$1 dir="$WORK/from-n$1-$2"
    mkdir -p "$dir"
    write_plan "$n" "$dir" from
    start_server
    nsenter --net=/run/netns/$TNS "$PERFLAB" run --quiet --runs-dir "$dir/runs" "$dir/plan.toml" > "$dir/run.log" 2>&1 \
        || { echo "the run failed:" >&2; cat "$dir/run.log" >&2; exit 1; }
    local served db rps req skew
    served=$(stop_server)
    db="$(ls -d "$dir"/runs/*/)perflab.db"
    rps=$(sqlite3 "$db" "SELECT m.value FROM metric m WHERE m.name = 'requests_per_s'")
    req=$(sqlite3 "$db" "SELECT m.value FROM metric m WHERE m.name = 'requests'")
    skew=$(sqlite3 "$db" "SELECT line FROM raw_output ORDER BY line_no" | sed -n 's/^launch skew: the segments began within \([0-9.]*\) ms.*/\1/p')
    echo "$rps ${skew:-0.00} ${req%.*} $served"
}

# One round of N segments; prints "rps skew_ms requests served".
round() {
    local n=$1 dir="$WORK/n$1-$2"
    mkdir -p "$dir"
    write_plan "$n" "$dir" segments
    start_server
    local t0 pids=() i
    t0=$(python3 -c 'import time; print(f"{time.time() + 2:.3f}")')
    for ((i = 0; i < n; i++)); do
        nsenter --net=/run/netns/${LNS[$i]} taskset -c $((i % $(nproc))) "$PERFLAB" run --quiet \
            --segment "$i/$n" --start-at "$t0" --start-tolerance 5s --runs-dir "$dir/seg$i" \
            "$dir/plan.toml" > "$dir/seg$i.log" 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || { echo "a segment failed:" >&2; cat "$dir"/seg*.log >&2; exit 1; }; done
    local served
    served=$(stop_server)
    "$PERFLAB" merge "$dir"/seg*/*/ --out "$dir/merged" --format md > "$dir/merge.log" 2>&1 \
        || { cat "$dir/merge.log" >&2; exit 1; }
    local db="$dir/merged/perflab.db"
    local rps req skew
    rps=$(sqlite3 "$db" "SELECT m.value FROM metric m WHERE m.name = 'requests_per_s'")
    req=$(sqlite3 "$db" "SELECT m.value FROM metric m WHERE m.name = 'requests'")
    skew=$(for ((i = 0; i < n; i++)); do
        sqlite3 "$(ls -d "$dir/seg$i"/*/)perflab.db" "SELECT json_extract(value, '$.late_s') FROM meta WHERE key = 'segment'"
    done | python3 -c 'import sys; v=[float(x) for x in sys.stdin]; print(f"{(max(v)-min(v))*1000:.2f}")')
    echo "$rps $skew ${req%.*} $served"
}

echo "# $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, perflab $("$PERFLAB" --version | cut -d' ' -f2)"
echo "# target: perflab serve --delay 20ms; each segment $CONNS connections, $REQUESTS requests, pinned to one core"
printf "%-9s %-3s %-5s %12s %12s %10s %9s %9s %s\n" way N round "merged r/s" "N x one r/s" ratio "skew ms" requests "served"
case " $MODES " in *" from "*) start_sshds ;; esac
declare -A ONE
for rep in $(seq "$REPS"); do
    for mode in $MODES; do
        for n in 1 2 3; do
            if [ "$mode" = from ]; then
                read -r rps skew req served < <(round_from "$n" "$rep")
            else
                read -r rps skew req served < <(round "$n" "$rep")
            fi
            [ "$n" = 1 ] && ONE[$mode$rep]=$rps
            ratio=$(python3 -c "print(f'{$rps / ($n * ${ONE[$mode$rep]}):.3f}')")
            exact=$([ "$req" = "$((REQUESTS * n))" ] && [ "$req" = "$served" ] && echo exact || echo "NOT EXACT")
            printf "%-9s %-3s %-5s %12.1f %12.1f %10s %9s %9s %s (%s)\n" "$mode" "$n" "$rep" "$rps" \
                "$(python3 -c "print($n * ${ONE[$mode$rep]})")" "$ratio" "$skew" "$req" "$served" "$exact"
        done
    done
done
echo "# goals: ratio >= 0.95, skew < 10 ms (between namespaces of one machine, both ways), counts exact"
