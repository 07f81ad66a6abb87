#!/bin/sh
# The I/O scheduler of the disk under a directory, for before/after variants:
#   io_scheduler.sh check DIR        exit 1 with a reason on stderr when it cannot be changed here
#   io_scheduler.sh set DIR NAME     save the current one (once) and switch to NAME
#   io_scheduler.sh restore DIR      switch back to the saved one
set -eu
cmd="$1" dir="$2"
src=$(findmnt -no SOURCE -T "$dir" 2>/dev/null || true)
dev=$(lsblk -no PKNAME "$src" 2>/dev/null | head -n1 || true)
[ -n "$dev" ] || dev=$(basename "$src")
f="/sys/block/$dev/queue/scheduler"
saved="/tmp/perflab-example-scheduler.$dev.orig"
case "$cmd" in
    check)
        [ -w "$f" ] || { echo "the I/O scheduler of $dir ($src) cannot be changed here: $f is not writable (needs root, a real block device, not a container)" >&2; exit 1; }
        grep -qw "${3:-none}" "$f" || { echo "the disk under $dir does not offer the scheduler ${3:-none} ($(cat "$f"))" >&2; exit 1; } ;;
    set)
        [ -f "$saved" ] || sed 's/.*\[\(.*\)\].*/\1/' "$f" >"$saved"
        echo "$3" >"$f" ;;
    restore)
        # Nothing saved (never set, or restored already): nothing to do.
        if [ -f "$saved" ]; then cat "$saved" >"$f" && rm -f "$saved"; fi ;;
    *) echo "io_scheduler.sh: check|set|restore DIR [NAME]" >&2; exit 2 ;;
esac
