#!/usr/bin/env bash
# The code a probe runs, per probe, for perflab and for the C loop of bench/probe_anchor.c: user-
# space instructions, and the distinct 4 KiB pages and 64-byte lines of code they come from. At
# 100 Hz a probe wakes after 10 ms of idle and finds its code cold: on a virtual machine each page
# it touches may cost a TLB miss with a nested page walk, which is where the part of perflab's CPU
# per probe above the C loop's goes (docs/probes.md, Cost). Counted with valgrind's callgrind
# (--dump-instr=yes) over a run of N1 and a run of N2 probes at 100 Hz (on loopback, towards
# perflab serve): an instruction is on the per-probe path when it ran at least once per probe more
# in the longer run, on the thread that runs the probes (perflab's summary at the end, sorting the
# samples, is on another); start-up cancels out. The kernel's side is not counted.
#
#   bench/probe_footprint.sh                  # udp, tcp, http; N1 100, N2 600
#   options: --kinds "udp tcp" (a subset), --n2 N
#   PERFLAB=/path/to/perflab counts that build (default: target/release/perflab)
set -euo pipefail

N1=100
N2=600
KINDS="udp tcp http"
while [ $# -gt 0 ]; do
    case "$1" in
        --kinds) KINDS="$2"; shift ;;
        --n2) N2="$2"; shift ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "probe_footprint.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
[ "$N2" -gt "$N1" ] 2>/dev/null || { echo "probe_footprint.sh: --n2 must be more than $N1" >&2; exit 2; }

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PERFLAB="${PERFLAB:-$ROOT/target/release/perflab}"
for tool in valgrind gcc python3; do
    command -v "$tool" >/dev/null || { echo "probe_footprint.sh: needs $tool (apt-get install valgrind gcc python3)" >&2; exit 2; }
done
if [ ! -x "$PERFLAB" ]; then
    echo "building the release binary"
    (cd "$ROOT" && cargo build --release -q)
fi

T="$(mktemp -d /tmp/perflab-footprint.XXXXXX)"
SERVE=
cleanup() {
    [ -z "$SERVE" ] || { kill "$SERVE" 2>/dev/null || true; wait "$SERVE" 2>/dev/null || true; }
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

gcc -O2 -o "$T/probe_anchor" "$ROOT/bench/probe_anchor.c"
"$PERFLAB" serve --host 127.0.0.1 --port 0 --threads 1 --udp-echo 0 >"$T/serve.out" 2>&1 &
SERVE=$!
for _ in $(seq 50); do [ "$(wc -l <"$T/serve.out")" -ge 2 ] && break; sleep 0.1; done
HTTP_PORT=$(awk '/listening on/ { print $3 }' "$T/serve.out" | sed 's/.*://')
UDP_PORT=$(awk '/echoing udp/ { print $4 }' "$T/serve.out" | sed 's/.*://')
[ -n "$HTTP_PORT" ] && [ -n "$UDP_PORT" ] || { echo "probe_footprint.sh: perflab serve did not start: $(cat "$T/serve.out")" >&2; exit 1; }

# The per-probe figures from two callgrind outputs: "instructions pages lines".
cat >"$T/footprint.py" <<'EOF'
import collections, glob, sys
def costs(path):
    """Instructions run at each code address (self cost; a call's inclusive line is skipped)."""
    c, after_call = collections.Counter(), False
    for line in open(path):
        if line.startswith("calls="):
            after_call = True
        elif line.startswith("0x"):
            if not after_call:
                f = line.split()
                c[int(f[0], 16)] += int(f[2]) if len(f) > 2 else 0
            after_call = False
        else:
            after_call = False
    return c
def threads(stem):
    """Per thread (callgrind's --separate-threads): its file's costs, by thread number."""
    return {f.rsplit("-", 1)[1]: costs(f) for f in glob.glob(stem + "-*")}
short, long_, n = threads(sys.argv[1]), threads(sys.argv[2]), int(sys.argv[3])
# The probe loop's thread: the one whose instructions grow most with the count (perflab's summary
# at the end, on another thread, also grows with it: sorting the samples).
t = max(long_, key=lambda k: sum(long_[k].values()) - sum(short.get(k, {}).values()))
s, l = short.get(t, collections.Counter()), long_[t]
hot = [a for a, v in l.items() if v - s.get(a, 0) >= n]
ins = (sum(l.values()) - sum(s.values())) / n
print(f"{ins:.0f} {len({a >> 12 for a in hot})} {len({a >> 6 for a in hot})}")
EOF

# count NAME N CMD...: callgrind over CMD; the output in $T/NAME.N.
count() {
    local name=$1 n=$2; shift 2
    valgrind --tool=callgrind --dump-instr=yes --separate-threads=yes --compress-pos=no --compress-strings=no \
        --callgrind-out-file="$T/$name.$n" "$@" >/dev/null 2>&1
}

echo "Code per probe at 100 Hz on loopback, user space ($(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r); runs of $N1 and $N2 probes)"
printf '| %-5s | %-8s | %12s | %11s | %10s |\n' probe prober instructions "4 KiB pages" "64 B lines"
printf '|%s|%s|%s|%s|%s|\n' ------- ---------- -------------- ------------- ------------
for kind in $KINDS; do
    case "$kind" in
        udp) ours=(udp "127.0.0.1:$UDP_PORT"); anchor=(udp 127.0.0.1 "$UDP_PORT") ;;
        tcp) ours=(tcp "127.0.0.1:$HTTP_PORT"); anchor=(tcp 127.0.0.1 "$HTTP_PORT") ;;
        http) ours=(http "http://127.0.0.1:$HTTP_PORT/"); anchor=(http 127.0.0.1 "$HTTP_PORT") ;;
        *) echo "probe_footprint.sh: unknown kind '$kind' (udp, tcp, http)" >&2; exit 2 ;;
    esac
    for n in "$N1" "$N2"; do
        count "perflab-$kind" "$n" "$PERFLAB" probe "${ours[@]}" -i 10ms -q -c "$n"
        count "anchor-$kind" "$n" "$T/probe_anchor" "${anchor[@]}" "$n" 10000
    done
    for who in perflab anchor; do
        read -r ins pages lines < <(python3 "$T/footprint.py" "$T/$who-$kind.$N1" "$T/$who-$kind.$N2" $((N2 - N1)))
        printf '| %-5s | %-8s | %12s | %11s | %10s |\n' "$kind" "$who" "$ins" "$pages" "$lines"
    done
done
