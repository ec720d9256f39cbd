#!/usr/bin/env bash
# Memory per device: DEVICES distinct devices (default 10,000,000), one fix each, through
# `fence eval` from a generator pipe, with and without --state; and the same for a tenth as
# many (1,000,000 at most, so both fill whole one-million-fix batches), so fixed costs (fences,
# batches, runtime) drop out of the per-device figure. Usage:
#
#   bash Tests/Reliability/devices.sh [DEVICES]     (FENCE=path/to/fence to skip the build)
#
# Peak resident size is GNU time's %M where /usr/bin/time exists, else the last VmHWM sample.
set -euo pipefail
devices=${1:-10000000}
small=$(( devices >= 2000000 ? 1000000 : devices / 10 ))
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
source .ci/setup
fence=${FENCE:-}
if [ -z "$fence" ]; then
    swift build -c release --product fence >&2
    fence="$(swift build -c release --show-bin-path)/fence"
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/fence-devices.XXXXXX")
trap 'rm -rf "$work"' EXIT
swiftc -O "$here/FixStream.swift" -o "$work/FixStream"
awk -v what=fences -v n=1000 -f "$here/gen.awk" > "$work/fences.geojson"

# peak N [--state FILE]: peak RSS in KiB of one run over N devices; the summary in $work/summary.
peak() {
    local n=$1
    shift
    if [ -x /usr/bin/time ]; then
        "$work/FixStream" "$n" "$n" | /usr/bin/time -f "%M" -o "$work/time" \
            "$fence" eval --fences "$work/fences.geojson" --positions - --output /dev/null "$@" 2>"$work/summary"
        tail -n 1 "$work/time"
    else
        "$work/FixStream" "$n" "$n" | "$fence" eval --fences "$work/fences.geojson" --positions - --output /dev/null "$@" 2>"$work/summary" &
        local pid=$! hwm=0 v
        while kill -0 "$pid" 2>/dev/null; do
            v=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
            [ -z "$v" ] || hwm=$v
            sleep 0.2
        done
        wait "$pid"
        echo "$hwm"
    fi
}
t0=$(date +%s)
small_plain=$(peak $small)
big_plain=$(peak "$devices")
summary=$(tail -n 1 "$work/summary")
small_state=$(peak $small --state "$work/small.state")
big_state=$(peak "$devices" --state "$work/big.state")
state_bytes=$(stat -c %s "$work/big.state")
per() { awk -v a="$1" -v b="$2" -v n=$((devices - small)) 'BEGIN { printf "%.0f", (b - a) * 1024 / n }'; }
echo "devices: $summary" >&2
echo "devices: $devices distinct devices, one fix each ($(( $(date +%s) - t0 )) s for the four runs):" \
    "peak RSS $((big_plain / 1024)) MB (${small} devices: $((small_plain / 1024)) MB), $(per "$small_plain" "$big_plain") bytes/device;" \
    "with --state $((big_state / 1024)) MB ($((small_state / 1024)) MB), $(per "$small_state" "$big_state") bytes/device;" \
    "checkpoint $state_bytes bytes ($((state_bytes / devices)) bytes/device)"
