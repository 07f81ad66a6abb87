#!/usr/bin/env bash
# The agent's cost and the clock offset's precision:
#   1. CPU % of one core of `perflab agent --stdio` sampling the system at 1 Hz and 10 Hz (fed over a
#      pipe, as ssh would feed it), from /proc/PID/stat between two readings DUR seconds apart.
#      Goal: < 0.2 % of a core at 1 Hz, as the local monitor.
#   2. The clock-offset uncertainty (± half the best of 8 round trips) over ssh and a veth pair into a
#      network namespace (needs root, sshd and ssh), from `perflab hosts check`, 10 times.
#      Goal: < 1 ms.
#
#   bench/agent_cost.sh            # 60 s per rate
#   bench/agent_cost.sh --quick    # 10 s per rate
#   options: --duration S
#
# Part 2 uses the network namespace perflab-bench16, the veth pair plb16h/plb16n and the subnet
# 10.213.17.0/24 (an `unreachable` route for it is added first, so that nothing leaves through the
# real interface); all three and sshd are removed on exit.
set -euo pipefail

DUR=60
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) DUR=10 ;;
        --duration) DUR="$2"; shift ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "agent_cost.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PERFLAB="$ROOT/target/release/perflab"
if [ ! -x "$PERFLAB" ]; then
    echo "building the release binary"
    (cd "$ROOT" && cargo build --release -q)
fi
T="$(mktemp -d /tmp/perflab-agentcost.XXXXXX)"
NS=perflab-bench16
SSHD=""
cleanup() {
    [ -n "$SSHD" ] && kill "$SSHD" 2>/dev/null
    if [ "$(id -u)" -eq 0 ]; then
        ip netns del "$NS" 2>/dev/null || true
        ip link del plb16h 2>/dev/null || true
        ip route del unreachable 10.213.17.0/24 2>/dev/null || true
    fi
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
TCK=$(getconf CLK_TCK)

ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }

echo "== agent CPU (% of one core) over ${DUR} s, sampling every system group =="
printf '%-8s %10s %10s\n' rate samples cpu_pct
for HZ in 1 10; do
    IV=$(awk -v h="$HZ" 'BEGIN { print 1 / h }')
    mkfifo "$T/in.$HZ"
    "$PERFLAB" agent --stdio < "$T/in.$HZ" > "$T/out.$HZ" &
    PID=$!
    exec 3> "$T/in.$HZ"
    printf '{"id":1,"op":"hello","protocol":1}\n{"id":2,"op":"sample","interval_s":%s}\n' "$IV" >&3
    sleep 1
    A=$(ticks "$PID")
    sleep "$DUR"
    B=$(ticks "$PID")
    exec 3>&-
    wait "$PID"
    N=$(grep -c '"event":"sample"' "$T/out.$HZ" || true)
    awk -v a="$A" -v b="$B" -v t="$TCK" -v d="$DUR" -v hz="$HZ" -v n="$N" \
        'BEGIN { printf "%-8s %10d %10.3f\n", hz " Hz", n, (b - a) / t / d * 100 }'
done

echo
echo "== clock-offset uncertainty over ssh + veth (ms) =="
if [ "$(id -u)" -ne 0 ] || [ ! -x /usr/sbin/sshd ] || ! command -v ssh >/dev/null; then
    echo "skipped: needs root, /usr/sbin/sshd and ssh (apt-get install openssh-server openssh-client)"
    exit 0
fi
ip netns del "$NS" 2>/dev/null || true
ip link del plb16h 2>/dev/null || true
ip route del unreachable 10.213.17.0/24 2>/dev/null || true
ip route add unreachable 10.213.17.0/24
ip netns add "$NS"
ip link add plb16h type veth peer name plb16n
ip link set plb16n netns "$NS"
ip addr add 10.213.17.1/30 dev plb16h
ip link set plb16h up
ip -n "$NS" addr add 10.213.17.2/30 dev plb16n
ip -n "$NS" link set plb16n up
ip -n "$NS" link set lo up
ssh-keygen -q -t ed25519 -N '' -f "$T/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$T/client_key"
cp "$T/client_key.pub" "$T/authorized_keys"
cat > "$T/sshd_config" <<CONF
Port 2217
ListenAddress 10.213.17.2
HostKey $T/host_key
AuthorizedKeysFile $T/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $T/sshd.pid
LogLevel ERROR
CONF
mkdir -p /run/sshd
nsenter --net="/var/run/netns/$NS" /usr/sbin/sshd -D -e -f "$T/sshd_config" 2>/dev/null &
SSHD=$!
for _ in $(seq 50); do (exec 3<>/dev/tcp/10.213.17.2/2217) 2>/dev/null && break; sleep 0.1; done
cat > "$T/plan.toml" <<PLAN
name = "agent-cost"
[workload]
type = "exec"
command = ["true"]
[hosts]
server = { ssh = "root@10.213.17.2", port = 2217, identity = "$T/client_key", perflab = "$PERFLAB", ssh_options = ["StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null", "LogLevel=ERROR"] }
PLAN
for _ in $(seq 10); do
    "$PERFLAB" hosts check "$T/plan.toml" | sed -n 's/.*clock offset \(.*\) ms ± \(.*\) ms/\1 \2/p'
done | awk '{ if (NR == 1 || $1 < lo) lo = $1; if (NR == 1 || $1 > hi) hi = $1; if ($2 > max) max = $2; s += $2 }
    END { printf "runs %d, offset (true 0) from %+.3f to %+.3f ms, uncertainty mean %.3f ms, max %.3f ms (goal < 1 ms)\n",
          NR, lo, hi, s / NR, max }'
