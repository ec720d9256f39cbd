#!/usr/bin/env bash
# Soak: COUNT fixes (default 100,000,000) of a bounded fleet through `fence eval` from a
# generator pipe, with the resident memory of the fence process sampled over time. Usage:
#
#   bash Tests/Reliability/soak.sh [COUNT] [DEVICES]      (FENCE=path/to/fence to skip the build)
#
# DEVICES (default 100,000) report round after round (Tests/Reliability/FixStream.swift) against
# 1,000 circle fences (gen.awk). Memory is sampled every SOAK_EVERY seconds (default 5; fractions
# work), from one interval after the start. After the first quarter of the run (every device has
# been seen long before), the resident size must stay flat: the largest sample of the last three
# quarters at most 5% + 32 MB above the largest of the first quarter; and every sample under
# SOAK_MAX_MB (default 2048). SOAK_BATCH (default
# 1,000,000) is fence eval's --batch; a short run needs small batches for memory to cycle within
# each quarter. The run prints its figures.
set -euo pipefail
count=${1:-100000000}
devices=${2:-100000}
every=${SOAK_EVERY:-5}
max_mb=${SOAK_MAX_MB:-2048}
batch=${SOAK_BATCH:-1000000}
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
source .ci/setup
fence=${FENCE:-}
if [ -z "$fence" ]; then
    swift build -c release --product fence >&2
    fence="$(swift build -c release --show-bin-path)/fence"
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/fence-soak.XXXXXX")
trap 'rm -rf "$work"' EXIT
swiftc -O "$here/FixStream.swift" -o "$work/FixStream"
awk -v what=fences -v n=1000 -f "$here/gen.awk" > "$work/fences.geojson"

start=$(date +%s%N)
"$work/FixStream" "$count" "$devices" | "$fence" eval --fences "$work/fences.geojson" --positions - --dwell 300 --batch "$batch" \
    --state "$work/state" --output /dev/null 2>"$work/summary" &
pid=$!
samples=()
# The first sample after one interval: one taken as the process starts (before the fences
# load) made a run of four samples look as if memory grew 13-fold.
while sleep "$every" && kill -0 "$pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
    if [ -n "$rss" ]; then
        samples+=("$rss")
        printf 'soak: %6ds  rss %5d MB\n' $(( ($(date +%s%N) - start) / 1000000000 )) $((rss / 1024)) >&2
    fi
done
set +e
wait "$pid"
status=$?
set -e
seconds=$(awk -v ns=$(( $(date +%s%N) - start )) 'BEGIN { printf "%.1f", ns / 1e9 }')
cat "$work/summary" >&2
[ "$status" -eq 0 ] || { echo "soak: FAILED: fence eval exited $status" >&2; exit 1; }
grep -q "$count positions read, 0 rejected" "$work/summary" || { echo "soak: FAILED: not every fix was read" >&2; exit 1; }
n=${#samples[@]}
[ "$n" -ge 4 ] || { echo "soak: too short for a verdict ($n samples); give a larger COUNT" >&2; exit 1; }
quarter=$(( (n + 3) / 4 ))
first_max=0 rest_max=0 low=${samples[0]} peak=0
for k in "${!samples[@]}"; do
    v=${samples[$k]}
    if [ "$k" -lt "$quarter" ]; then [ "$v" -gt "$first_max" ] && first_max=$v; else [ "$v" -gt "$rest_max" ] && rest_max=$v; fi
    [ "$v" -gt "$peak" ] && peak=$v
    [ "$v" -lt "$low" ] && low=$v
done
allowed=$(( first_max + first_max / 20 + 32 * 1024 ))
state_bytes=$(stat -c %s "$work/state")
echo "soak: $count fixes of $devices devices in $seconds s ($(awk -v c="$count" -v s="$seconds" 'BEGIN { printf "%.2f", c / s / 1e6 }') M fixes/s);" \
    "$n RSS samples every ${every}s: min $((low / 1024)) MB, first quarter max $((first_max / 1024)) MB, rest max $((rest_max / 1024)) MB," \
    "peak $((peak / 1024)) MB (bound ${max_mb} MB); final checkpoint $state_bytes bytes ($((state_bytes / devices)) bytes/device)"
[ "$rest_max" -le "$allowed" ] || { echo "soak: FAILED: memory grew: $((rest_max / 1024)) MB after the first quarter's $((first_max / 1024)) MB" >&2; exit 1; }
[ "$peak" -le $((max_mb * 1024)) ] || { echo "soak: FAILED: peak $((peak / 1024)) MB over the ${max_mb} MB bound" >&2; exit 1; }
echo "soak: memory flat"
