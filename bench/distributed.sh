#!/usr/bin/env bash
# A load split over 1, 2 and 3 load machines (network namespaces, each segment pinned to one
# core) against one target (`perflab serve --delay 20ms` in a namespace of its own), three ways:
# `segments`, N `perflab run --segment i/N --start-at T0` merged by `perflab merge`; `from`, one
# `perflab run` whose `[workload] from` names N hosts reached over ssh (an sshd in each load
# namespace, its agent pinned with it), merged per trial; `slurm`, `perflab dist slurm --nodes N
# --submit` on a Slurm cluster made here (munged, slurmctld in the target's namespace, one slurmd
# per load namespace pinned to that segment's core), one segment per node merged by the job.
# For each N: the merged throughput against N × the throughput of one segment alone (goal ≥ 0.95),
# the launch skew between the segments (the spread of how late each began after the common start
# T0, from their stores' segment marks; goal < 10 ms, < 50 ms under Slurm), and whether the merged
# request count equals the plan's and the count the server served (exact).
#
# The target answers each request after 20 ms, so a segment's throughput is set by its
# connections and the delay, not by the 2 CPUs the segments and the target share here: what the
# ratio measures is what splitting and merging lose.
#
#   sudo bench/distributed.sh                 # the three ways, N = 1 2 3, 3 rounds each
#   sudo bench/distributed.sh --reps 1        # one round
#   sudo bench/distributed.sh --mode from     # only over ssh (or: --mode segments, --mode slurm,
#                                             # --mode "segments slurm")
#   PERFLAB=/path/to/perflab measures that build (default: target/release/perflab)
#
# Safety: the root namespace gets an `unreachable` route for the whole test subnet
# (198.18.31.0/24, the benchmarking range) before any interface is addressed; the namespaces,
# the route, the server, the sshds and the Slurm cluster (its jobs cancelled, its daemons stopped
# by PID, its directory) are removed on every exit, Ctrl-C included. The cluster writes nothing
# under /etc: its key, sockets, slurm.conf and state are in the bench's temporary directory.
set -euo pipefail

REPS=3
MODES="segments from slurm"
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
case " $MODES " in
    *" slurm "*)
        PATH="$PATH:/usr/sbin:/sbin"
        missing=$(for t in munged slurmctld slurmd sbatch srun sinfo squeue scancel; do
            command -v "$t" > /dev/null || printf ' %s' "$t"; done)
        [ -z "$missing" ] || { echo "--mode slurm needs Slurm and MUNGE (slurmctld, slurmd, slurm-client, munge): no$missing" >&2; exit 2; }
        ;;
esac

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
SLURM_PIDS=()  # munged, slurmctld, then the slurmd's

cleanup() {
    stop_cluster
    # A round runs in a subshell: a server it started and did not stop is known by its PID file.
    [ -z "$SERVE_PID" ] && [ -f "$WORK/serve.pid" ] && SERVE_PID=$(cat "$WORK/serve.pid")
    if [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null; then
        for _ in $(seq 50); do kill -0 "$SERVE_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$SERVE_PID" 2>/dev/null || true
        wait "$SERVE_PID" 2>/dev/null || true
    fi
    for p in "${SSHD_PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
    for ns in "${LNS[@]}" "$TNS"; do ip netns del "$ns" 2>/dev/null || true; done
    ip route del unreachable "$SUBNET" 2>/dev/null || true
    rm -rf "$WORK"
}

# The cluster's jobs cancelled (all of them are this bench's), then its daemons stopped by PID,
# the nodes before the controller before munged: SIGTERM, SIGKILL after 5 s.
stop_cluster() {
    [ ${#SLURM_PIDS[@]} -gt 0 ] || return 0
    if [ -e "/run/netns/$TNS" ] && kill -0 "${SLURM_PIDS[1]:-}" 2>/dev/null; then
        timeout 5 nsenter --net=/run/netns/$TNS scancel --user root 2>/dev/null || true
        for _ in $(seq 50); do
            [ -z "$(timeout 2 nsenter --net=/run/netns/$TNS squeue -h 2>/dev/null)" ] && break
            sleep 0.1
        done
    fi
    local i p
    for ((i = ${#SLURM_PIDS[@]} - 1; i >= 0; i--)); do kill -TERM "${SLURM_PIDS[$i]}" 2>/dev/null || true; done
    for ((i = ${#SLURM_PIDS[@]} - 1; i >= 0; i--)); do
        p=${SLURM_PIDS[$i]}
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    SLURM_PIDS=()
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
    echo "$SERVE_PID" > "$WORK/serve.pid"
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
    rm -f "$WORK/serve.pid"
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

# A Slurm cluster of this bench's own in $WORK/slurm: munged (its own key and socket), slurmctld
# in the target's namespace (the submit host, which reaches every load namespace over its veth),
# node nK+1 a slurmd in load namespace K with a host name of its own (a UTS namespace; `nsenter
# --net`, not `ip netns exec`, which would remount /sys), pinned to that segment's core (its jobs'
# steps inherit it). SLURM_CONF points every Slurm command at it; the Slurm variables of the
# caller's environment (a bench run inside a Slurm job) are dropped. Each daemon has a session of
# its own (setsid execs it: its PID is $!), so that a Ctrl-C lets the round's job end and the
# cleanup stop them in order.
start_cluster() {
    local v k d="$WORK/slurm"
    for v in $(compgen -e); do
        case "$v" in SLURM_* | SBATCH_* | SRUN_* | SALLOC_*) unset "$v" ;; esac
    done
    # A job's srun, on its first node, talks with the slurmd of every other node: the load
    # namespaces reach one another through the target's, which forwards between its veths.
    nsenter --net=/run/netns/$TNS sysctl -qw net.ipv4.ip_forward=1
    for k in 0 1 2; do
        ip -n "${LNS[$k]}" route add "$SUBNET" via "198.18.31.$((4 * k + 2))"
    done
    # munged wants every directory above its socket searchable by all.
    chmod 711 "$WORK"
    mkdir -p "$d/munge" "$d/state" "$d"/spool/n{1,2,3}
    chmod 711 "$d"
    chmod 755 "$d/munge"
    head -c 128 /dev/urandom > "$d/munge/munge.key"
    chmod 600 "$d/munge/munge.key"
    cat > "$d/slurm.conf" <<CONF
ClusterName=perflabbench
SlurmctldHost=$(hostname -s)($TARGET)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd-%n.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
KillWait=2
MinJobAge=0
CONF
    for k in 0 1 2; do
        echo "NodeName=n$((k + 1)) NodeAddr=198.18.31.$((4 * k + 1)) CPUs=1 RealMemory=100" >> "$d/slurm.conf"
    done
    echo "PartitionName=bench Nodes=n[1-3] Default=YES MaxTime=5 State=UP" >> "$d/slurm.conf"
    export SLURM_CONF="$d/slurm.conf"
    setsid munged -F --socket="$d/munge/socket" --key-file="$d/munge/munge.key" \
        --log-file="$d/munge/munged.log" --pid-file="$d/munge/munged.pid" \
        --seed-file="$d/munge/munged.seed" > "$d/munged.out" 2>&1 &
    SLURM_PIDS+=($!)
    for _ in $(seq 100); do [ -S "$d/munge/socket" ] && break; sleep 0.1; done
    setsid nsenter --net=/run/netns/$TNS slurmctld -D > "$d/slurmctld.out" 2>&1 &
    SLURM_PIDS+=($!)
    for k in 0 1 2; do
        setsid nsenter --net=/run/netns/${LNS[$k]} taskset -c $((k % $(nproc))) unshare --uts \
            sh -c 'hostname "$0" && exec slurmd -D -N "$0"' "n$((k + 1))" > "$d/slurmd-n$((k + 1)).out" 2>&1 &
        SLURM_PIDS+=($!)
    done
    local idle
    for _ in $(seq 300); do
        idle=$(nsenter --net=/run/netns/$TNS sinfo -h -N -o '%N=%T' 2>/dev/null | grep -c '=idle$' || true)
        [ "$idle" = 3 ] && return
        sleep 0.1
    done
    echo "the Slurm cluster did not start (three idle nodes within 30 s); its logs:" >&2
    tail -n 15 "$d"/*.log "$d"/*.out >&2
    exit 1
}

# One round of N segments as a Slurm job (`perflab dist slurm --submit`, run in the target's
# namespace; the job's directory is shared by every node: one file system); prints
# "rps skew_ms requests served".
round_slurm() {
    local n=$1 dir="$WORK/slurm-n$1-$2" i
    mkdir -p "$dir"
    write_plan "$n" "$dir" segments
    start_server
    (cd "$dir" && nsenter --net=/run/netns/$TNS "$PERFLAB" dist slurm --nodes "$n" --start-in 3s \
        --start-tolerance 5s --perflab "$PERFLAB" --sbatch=--time=2 --submit --dir "$dir/job" \
        "$dir/plan.toml") > "$dir/submit.log" 2>&1 \
        || { echo "the Slurm job failed:" >&2; cat "$dir/submit.log" "$dir"/job/slurm-*.out >&2; exit 1; }
    local served
    served=$(stop_server)
    local db="$dir/job/merged/perflab.db" rps req skew
    rps=$(sqlite3 "$db" "SELECT m.value FROM metric m WHERE m.name = 'requests_per_s'")
    req=$(sqlite3 "$db" "SELECT m.value FROM metric m WHERE m.name = 'requests'")
    skew=$(for ((i = 0; i < n; i++)); do
        sqlite3 "$(ls -d "$dir/job/segment-$i"/*/)perflab.db" "SELECT json_extract(value, '$.late_s') FROM meta WHERE key = 'segment'"
    done | python3 -c 'import sys; v=[float(x) for x in sys.stdin]; print(f"{(max(v)-min(v))*1000:.2f}")')
    echo "$rps $skew ${req%.*} $served"
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
case " $MODES " in *" slurm "*) start_cluster ;; esac
declare -A ONE
for rep in $(seq "$REPS"); do
    for mode in $MODES; do
        for n in 1 2 3; do
            if [ "$mode" = from ]; then
                read -r rps skew req served < <(round_from "$n" "$rep")
            elif [ "$mode" = slurm ]; then
                read -r rps skew req served < <(round_slurm "$n" "$rep")
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
echo "# goals: ratio >= 0.95, skew < 10 ms between namespaces of one machine (< 50 ms under Slurm), counts exact"
