#!/usr/bin/env bash
# perflab http against wrk and ab, on loopback against nginx. perflab's goals, checked at the end:
# with keep-alive at least 1.10 x wrk's requests/s and at most 0.8 x ab -k's client CPU per request;
# with Connection: close at least wrk's requests/s; the RSS of a 60 s run at most 1.1 x that of a
# 10 s run (memory does not grow with the run's length).
#
#   bench/http_vs_peers.sh            # 3 repetitions x 5 s per cell, medians; RSS of 60 s vs 10 s
#   bench/http_vs_peers.sh --quick    # smoke test: 1 repetition x 2 s; RSS of 6 s vs 2 s
#   options: --max-busy P   before each repetition, wait (at most 3 min) until the machine, with
#                           nothing of ours running, is less than P % busy over 2 s (default 25)
#            --port N       nginx port (default: the first free one from 18080)
#            --no-rss       leave out the RSS of a long run against a short one
#            --uring        keep-alive only, 5 repetitions (unless --quick), the io_uring engine
#                           (perflab http --engine uring) beside the epoll one, wrk and ab -k, with the
#                           uring/epoll ratios and the goals judged for both engines; no RSS rows
#   PERFLAB_BEFORE=/path/to/perflab bench/http_vs_peers.sh
#                           also runs that binary (an older build, e.g. of the commit before a change)
#                           as the client "before", in the same repetitions, taking turns with the
#                           others, and prints its figures beside this build's ("after") with the
#                           after/before ratios of req/s and CPU per request; the extra thread-count
#                           row is then left out to keep the run short
#
# nginx (2 workers, access_log off, keepalive_requests 100000000) serves an 800-byte file from a
# private config in a temp dir; it is stopped on exit. It listens with reuseport, so the kernel spreads
# the connections over the two workers by their addresses. Without it, whichever worker wakes first
# takes a burst of new connections: ss -tnp showed all 10 of a c=10 run on one worker in 4 of 5 runs
# of perflab and 3 of 6 of ab (wrk's two threads split them 2/8 to 5/5), and c=10 throughput followed
# that split, not the client. Each client is run under /usr/bin/time: its
# CPU per request is (user + sys of the client process) / completed requests. Missing packages
# (nginx, wrk, apache2-utils, time) are installed with apt-get -y.
set -euo pipefail

REPS=3 DUR=5 RSS_SHORT=10 RSS_LONG=60 MAX_BUSY=25 PORT="" RSS=1 URING=0 QUICK=0
CS=(10 50 100)
MODES=(ka close)
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) REPS=1 DUR=2 RSS_SHORT=2 RSS_LONG=6 QUICK=1 ;;
        --uring) URING=1 ;;
        --max-busy) MAX_BUSY="$2"; shift ;;
        --port) PORT="$2"; shift ;;
        --no-rss) RSS=0 ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        *) echo "http_vs_peers.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done

if [ "$URING" = 1 ]; then
    MODES=(ka) RSS=0
    [ "$QUICK" = 1 ] || REPS=5
fi
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PERFLAB="$ROOT/target/release/perflab"
BEFORE="${PERFLAB_BEFORE:-}"
if [ -n "$BEFORE" ] && [ ! -x "$BEFORE" ]; then
    echo "http_vs_peers.sh: PERFLAB_BEFORE=$BEFORE is not an executable file" >&2
    exit 2
fi

# --- packages -------------------------------------------------------------------------------
need=()
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v wrk >/dev/null || need+=(wrk)
command -v ab >/dev/null || need+=(apache2-utils)
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    echo "installing: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get -y -q install "${need[@]}" >/dev/null ||
        { $SUDO apt-get -q update >/dev/null && $SUDO apt-get -y -q install "${need[@]}" >/dev/null; }
fi
if [ ! -x "$PERFLAB" ]; then
    echo "building the release binary"
    (cd "$ROOT" && cargo build --release -q)
fi

# --- nginx ----------------------------------------------------------------------------------
# shellcheck source=bench/nginx.sh
. "$ROOT/bench/nginx.sh"
start_nginx 18080
size=$(curl -s -o /dev/null -w '%{size_download}' "$URL" 2>/dev/null || echo "?")
[ "$size" = "800" ] || { echo "nginx does not serve 800 bytes at $URL (got '$size')" >&2; exit 1; }

# --- running a client -----------------------------------------------------------------------
# How busy the machine is (% of all CPUs, over 2 s) while none of our clients runs: other work.
busy() {
    local a b
    a=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat)
    sleep 2
    b=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat)
    awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); u = y[1] - x[1]; i = y[2] - x[2]; printf "%.0f", (u + i > 0 ? 100 * u / (u + i) : 0) }'
}
BUSY=0
wait_quiet() {
    local waited=0
    BUSY=$(busy)
    while [ "$BUSY" -ge "$MAX_BUSY" ]; do
        [ $waited -ge 180 ] && { echo "  (still ${BUSY} % busy after 3 min: going on, figures are noisy)"; return 0; }
        sleep 8; waited=$((waited + 10))
        BUSY=$(busy)
    done
}
conditions() { echo "others ${BUSY} % busy, load $(cut -d' ' -f1-3 /proc/loadavg)"; }

# cmd TOOL MODE C DUR: the client's command line (MODE: ka = keep-alive, close).
cmd() {
    local tool=$1 mode=$2 c=$3 d=$4
    case "$tool/$mode" in
        wrk/ka) echo "wrk -t2 -c$c -d${d}s $URL" ;;
        wrk/close) echo "wrk -t2 -c$c -d${d}s -H Connection:close $URL" ;;
        ab/ka) echo "ab -q -t $d -n 20000000 -c $c -k $URL" ;;
        ab/close) echo "ab -q -t $d -n 20000000 -c $c $URL" ;;
        perflab/ka) echo "$PERFLAB http -q -c $c -d ${d}s $URL" ;;
        perflab/close) echo "$PERFLAB http -q --no-keepalive -c $c -d ${d}s $URL" ;;
        perflabN/ka) echo "$PERFLAB http -q -t $(nproc) -c $c -d ${d}s $URL" ;;
        uring/ka) echo "$PERFLAB http --engine uring -q -c $c -d ${d}s $URL" ;;
        perflabN/close) echo "$PERFLAB http -q -t 1 --no-keepalive -c $c -d ${d}s $URL" ;;
        before/ka) echo "$BEFORE http -q -c $c -d ${d}s $URL" ;;
        before/close) echo "$BEFORE http -q --no-keepalive -c $c -d ${d}s $URL" ;;
    esac
}

# run TOOL MODE C: prints "req_per_s cpu_us_per_req completed errors"
run() {
    local tool=$1 mode=$2 c=$3 out="$T/out.txt" tm="$T/time.txt"
    # wrk needs the header as one argument: build the array by hand for that case.
    local -a argv
    read -r -a argv <<<"$(cmd "$tool" "$mode" "$c" "$DUR")"
    [ "$tool/$mode" = wrk/close ] && argv[5]="Connection: close"
    /usr/bin/time -f '%U %S' -o "$tm" "${argv[@]}" >"$out" 2>&1 || true
    local cpu n rps err
    cpu=$(awk '{ print $1 + $2 }' "$tm" | tail -1)
    case $tool in
        wrk)
            n=$(awk '/requests in/ { print $1 }' "$out")
            rps=$(awk '/^Requests\/sec:/ { print $2 }' "$out")
            err=$(awk '/Non-2xx/ { e += $NF } /Socket errors/ { gsub(",", ""); e += $4 + $6 + $8 + $10 } END { print e + 0 }' "$out") ;;
        ab|perflab|perflabN|uring|before)
            n=$(awk '/^Complete requests:/ { print $3 }' "$out")
            rps=$(awk '/^Requests per second:/ { print $4 }' "$out")
            err=$(awk '/^Failed requests:/ { e += $3 } /^Non-2xx responses:/ { e += $3 } END { print e + 0 }' "$out") ;;
    esac
    if [ -z "$n" ] || [ -z "$rps" ] || [ "$n" = 0 ]; then
        echo "  $tool $mode c=$c produced no result:" >&2
        sed 's/^/    /' "$out" | tail -5 >&2
        echo "0 0 0 0"
        return
    fi
    awk -v r="$rps" -v c="$cpu" -v n="$n" -v e="$err" 'BEGIN { printf "%.0f %.2f %d %d\n", r, c * 1e6 / n, n, e }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# perflabN is an extra row, not part of the goals: the other thread count than the default (keep-alive:
# one worker per CPU instead of half the CPUs; Connection: close: one worker instead of one per CPU),
# to show why the defaults are what they are when the client shares the cores with the server.
TOOLS=(wrk ab perflab perflabN)
[ -n "$BEFORE" ] && TOOLS=(wrk ab perflab before)
if [ "$URING" = 1 ]; then
    "$PERFLAB" http --engine uring -q -n 10 -c 1 "$URL" >/dev/null 2>&1 ||
        { echo "http_vs_peers.sh: perflab http --engine uring does not run here:" >&2; "$PERFLAB" http --engine uring -q -n 10 -c 1 "$URL" >&2 || true; exit 1; }
    TOOLS=(wrk ab perflab uring)
fi
echo "perflab http vs wrk and ab — $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, $(uname -r)"
echo "target: nginx $("$NGINX" -v 2>&1 | sed 's/.*\///') (2 workers, reuseport) at $URL (800 B), $REPS x ${DUR}s per cell, medians"
echo "clients: $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2), ab $(ab -V | awk '/Version/ { print $5; exit }'), perflab $($PERFLAB --version | awk '{ print $2 }')"
[ -n "$BEFORE" ] && echo "before: $BEFORE ($("$BEFORE" --version | awk '{ print $2 }')), after: $PERFLAB"
BUSY=$(busy)
echo "at start: $(conditions)"
echo
declare -A RPS CPU
for mode in "${MODES[@]}"; do
    echo "== $([ $mode = ka ] && echo keep-alive || echo 'Connection: close') =="
    for rep in $(seq "$REPS"); do
        wait_quiet
        echo "repetition $rep ($(conditions))"
        # The clients take turns first: the order rotates with each repetition, so that a drift of the
        # machine during a repetition does not always fall on the same client.
        k=$(( (rep - 1) % ${#TOOLS[@]} ))
        order=("${TOOLS[@]:k}" "${TOOLS[@]:0:k}")
        for c in "${CS[@]}"; do
            for tool in "${order[@]}"; do
                read -r r u n e <<<"$(run $tool $mode "$c")"
                printf '  %-8s c=%-4s %9s req/s %7s us/req  (%s done, %s errors)\n' "$tool" "$c" "$r" "$u" "$n" "$e"
                RPS[$mode,$tool,$c]+="$r "
                CPU[$mode,$tool,$c]+="$u "
                sleep 1
            done
        done
    done
    echo
done

med() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | median; }
declare -A MR MC
for key in "${!RPS[@]}"; do
    MR[$key]=$(med "${RPS[$key]}")
    MC[$key]=$(med "${CPU[$key]}")
done

label() {
    case "$1/$2" in
        wrk/ka) echo "wrk -t2" ;;
        wrk/close) echo "wrk -t2 -H 'Connection: close'" ;;
        ab/ka) echo "ab -k" ;;
        ab/close) echo "ab" ;;
        perflab/ka) echo "perflab http$([ "$URING" = 1 ] && echo ' (epoll)')" ;;
        uring/ka) echo "perflab http --engine uring" ;;
        perflab/close) echo "perflab http --no-keepalive" ;;
        perflabN/ka) echo "(extra) perflab http -t $(nproc)" ;;
        perflabN/close) echo "(extra) perflab http -t 1 --no-k.." ;;
        before/ka) echo "perflab http (before)" ;;
        before/close) echo "perflab http --no-k.. (before)" ;;
    esac
}
table() {
    local mode=$1 title=$2
    echo "$title: median req/s (ratio to wrk) | client CPU us/req"
    printf '| %-28s |' client
    for c in "${CS[@]}"; do printf ' %-18s |' "c=$c"; done
    printf ' %-20s |\n' "CPU us/req (c=$(IFS=/; echo "${CS[*]}"))"
    printf '|%s|' "------------------------------"
    for _ in "${CS[@]}"; do printf '%s|' "--------------------"; done
    printf '%s|\n' "----------------------"
    for tool in "${TOOLS[@]}"; do
        printf '| %-28s |' "$(label $tool $mode)"
        local cpus=""
        for c in "${CS[@]}"; do
            printf ' %-18s |' "$(awk -v r="${MR[$mode,$tool,$c]}" -v w="${MR[$mode,wrk,$c]}" 'BEGIN { printf "%d (%.2f)", r, (w > 0 ? r / w : 0) }')"
            cpus+="${MC[$mode,$tool,$c]} / "
        done
        printf ' %-20s |\n' "${cpus% / }"
    done
    echo
}
table ka "Keep-alive"
[ "$URING" = 1 ] || table close "Connection: close"

verdict() { awk -v a="$1" -v op="$2" -v b="$3" 'BEGIN { ok = (op == ">=") ? (a >= b) : (a <= b); print ok ? "PASS" : "MISS" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

# --- before / after ---------------------------------------------------------------------------
if [ -n "$BEFORE" ]; then
    echo "Before / after (medians of $REPS x ${DUR}s): after/before ratios; wrk and ab beside them"
    printf '| %-18s | %-6s | %-10s | %-10s | %-6s | %-10s | %-10s | %-10s | %-10s | %-6s |\n' \
        mode c "before r/s" "after r/s" ratio "wrk r/s" "ab r/s" "before us" "after us" ratio
    printf '|%s|\n' "--------------------|--------|------------|------------|--------|------------|------------|------------|------------|--------"
    for mode in ka close; do
        for c in "${CS[@]}"; do
            printf '| %-18s | %-6s | %-10s | %-10s | %-6s | %-10s | %-10s | %-10s | %-10s | %-6s |\n' \
                "$([ $mode = ka ] && echo keep-alive || echo 'Connection: close')" "$c" \
                "${MR[$mode,before,$c]}" "${MR[$mode,perflab,$c]}" "$(ratio "${MR[$mode,perflab,$c]}" "${MR[$mode,before,$c]}")" \
                "${MR[$mode,wrk,$c]}" "${MR[$mode,ab,$c]}" \
                "${MC[$mode,before,$c]}" "${MC[$mode,perflab,$c]}" "$(ratio "${MC[$mode,perflab,$c]}" "${MC[$mode,before,$c]}")"
        done
    done
    echo "(req/s ratio above 1 and CPU ratio below 1 are the after build doing better)"
    echo
fi

# --- RSS: a long run against a short one ------------------------------------------------------
rss() {
    /usr/bin/time -v -o "$T/rss.txt" "$PERFLAB" http -q -c 50 -d "${1}s" "$URL" >/dev/null 2>&1 || true
    awk -F': ' '/Maximum resident set size/ { print $2 }' "$T/rss.txt"
}
if [ "$RSS" = 1 ]; then
    wait_quiet
    echo "RSS of perflab http -c 50 ($(conditions))"
    RS=$(rss "$RSS_SHORT")
    RL=$(rss "$RSS_LONG")
    printf '  %3s s run: %6s KiB max RSS\n  %3s s run: %6s KiB max RSS\n\n' "$RSS_SHORT" "$RS" "$RSS_LONG" "$RL"
fi

# --- uring against epoll ------------------------------------------------------------------------
if [ "$URING" = 1 ]; then
    echo "io_uring against epoll (medians of $REPS x ${DUR}s): uring/epoll ratios"
    printf '| %-6s | %-10s | %-10s | %-6s | %-10s | %-10s | %-6s |\n' c "epoll r/s" "uring r/s" ratio "epoll us" "uring us" ratio
    printf '|%s|\n' "--------|------------|------------|--------|------------|------------|--------"
    for c in "${CS[@]}"; do
        printf '| %-6s | %-10s | %-10s | %-6s | %-10s | %-10s | %-6s |\n' "$c" \
            "${MR[ka,perflab,$c]}" "${MR[ka,uring,$c]}" "$(ratio "${MR[ka,uring,$c]}" "${MR[ka,perflab,$c]}")" \
            "${MC[ka,perflab,$c]}" "${MC[ka,uring,$c]}" "$(ratio "${MC[ka,uring,$c]}" "${MC[ka,perflab,$c]}")"
    done
    echo "(uring stays behind --engine unless its req/s ratio is above 1 at every c)"
    echo
    echo "Goals of both engines, medians of $REPS x ${DUR}s"
    printf '| %-46s | %-24s | %-4s |\n' goal measured result
    printf '|%s|%s|%s|\n' "------------------------------------------------" "--------------------------" "------"
    for tool in perflab uring; do
        name=$([ $tool = perflab ] && echo epoll || echo uring)
        for c in "${CS[@]}"; do
            r=$(ratio "${MR[ka,$tool,$c]}" "${MR[ka,wrk,$c]}")
            printf '| %-46s | %-24s | %-4s |\n' "$name: req/s >= 1.25 x wrk, c=$c" "$r x" "$(verdict "$r" '>=' 1.25)"
        done
        for c in "${CS[@]}"; do
            r=$(ratio "${MC[ka,$tool,$c]}" "${MC[ka,ab,$c]}")
            printf '| %-46s | %-24s | %-4s |\n' "$name: client CPU/req <= 0.7 x ab -k, c=$c" "${MC[ka,$tool,$c]} vs ${MC[ka,ab,$c]} us = $r x" "$(verdict "$r" '<=' 0.70)"
        done
    done
    echo
    echo "at end: load $(cut -d' ' -f1-3 /proc/loadavg)"
    exit 0
fi

# --- goals ----------------------------------------------------------------------------------
echo "Goals, medians of $REPS x ${DUR}s"
printf '| %-46s | %-24s | %-4s |\n' goal measured result
printf '|%s|%s|%s|\n' "------------------------------------------------" "--------------------------" "------"
for c in "${CS[@]}"; do
    r=$(ratio "${MR[ka,perflab,$c]}" "${MR[ka,wrk,$c]}")
    printf '| %-46s | %-24s | %-4s |\n' "keep-alive req/s >= 1.10 x wrk, c=$c" "$r x" "$(verdict "$r" '>=' 1.10)"
done
for c in "${CS[@]}"; do
    r=$(ratio "${MC[ka,perflab,$c]}" "${MC[ka,ab,$c]}")
    printf '| %-46s | %-24s | %-4s |\n' "client CPU/req <= 0.8 x ab -k, c=$c" "${MC[ka,perflab,$c]} vs ${MC[ka,ab,$c]} us = $r x" "$(verdict "$r" '<=' 0.80)"
done
for c in "${CS[@]}"; do
    r=$(ratio "${MR[close,perflab,$c]}" "${MR[close,wrk,$c]}")
    printf '| %-46s | %-24s | %-4s |\n' "Connection: close req/s >= 1.0 x wrk, c=$c" "$r x" "$(verdict "$r" '>=' 1.00)"
done
if [ "$RSS" = 1 ]; then
    r=$(ratio "$RL" "$RS")
    printf '| %-46s | %-24s | %-4s |\n' "RSS ${RSS_LONG} s run <= 1.1 x RSS ${RSS_SHORT} s run" "$RL / $RS KiB = $r x" "$(verdict "$r" '<=' 1.10)"
fi
echo
echo "at end: load $(cut -d' ' -f1-3 /proc/loadavg)"
