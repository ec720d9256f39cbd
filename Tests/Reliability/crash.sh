#!/usr/bin/env bash
# Crash safety of `fence eval --state`: SIGKILL at random points, including during the
# checkpoint write, KILLS times (default 50). Usage:
#
#   bash Tests/Reliability/crash.sh [KILLS]        (FENCE=path/to/fence to skip the build)
#
# The input is a fleet's day cut into CHUNKS files, each run with --state as a pipeline would.
# Reference: the chunks run one after another, without a kill, giving each chunk's events and
# the checkpoint after it; their events put together must equal one uninterrupted run over
# all the input. Then, KILLS times: a random chunk starts from the reference checkpoint before
# it and is killed with SIGKILL, either after a random delay within the run's length, near its
# end, or as soon as the checkpoint's temporary file appears (during the write). After each
# kill:
#   - the state file must be, byte for byte, the checkpoint before the chunk (or, when the kill
#     came after the rename, the one after it): never missing, torn or empty;
#   - `fence eval` resumes from it: the chunk (or the next one) gives exactly the reference
#     events and the reference checkpoint;
#   - no temporary file of a killed writer is left once the next write has happened.
# A run that finished before its kill is not counted (and the delays shrink a little); attempts
# go on until KILLS kills landed.
set -euo pipefail
kills=${1:-50}
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
source .ci/setup
fence=${FENCE:-}
if [ -z "$fence" ]; then
    swift build --product fence >&2
    fence="$(swift build --show-bin-path)/fence"
fi
chunks=4
devices=${CRASH_DEVICES:-20000}
work=$(mktemp -d "${TMPDIR:-/tmp}/fence-crash.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "crash: FAILED: $*" >&2; exit 1; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

awk -v what=fences -v n=100 -f "$here/gen.awk" > "$work/fences.geojson"
for i in $(seq 0 $((chunks - 1))); do
    awk -v what=fixes -v devices="$devices" -v rounds=5 -v first=$((i * 5)) -v seed=$((i + 1)) -f "$here/gen.awk" > "$work/chunk-$i.csv"
done
opts=(--fences "$work/fences.geojson" --dwell 120)

# Reference: one uninterrupted run, and the chunks one after another with --state.
{ cat "$work/chunk-0.csv"; for i in $(seq 1 $((chunks - 1))); do tail -n +2 "$work/chunk-$i.csv"; done; } > "$work/all.csv"
"$fence" eval "${opts[@]}" --positions "$work/all.csv" --output "$work/all.ndjson" 2>/dev/null
total_ms=0
for i in $(seq 0 $((chunks - 1))); do
    t0=$(now_ms)
    "$fence" eval "${opts[@]}" --positions "$work/chunk-$i.csv" --state "$work/ref.state" --output "$work/ref-events-$i" 2>/dev/null
    total_ms=$((total_ms + $(now_ms) - t0))
    cp "$work/ref.state" "$work/ref-state-$i"
done
for i in $(seq 0 $((chunks - 1))); do cat "$work/ref-events-$i"; done > "$work/ref-all.ndjson"
cmp -s "$work/ref-all.ndjson" "$work/all.ndjson" || fail "the chunks with --state do not give the uninterrupted run's events"
run_ms=$((total_ms / chunks))
echo "crash: $chunks chunks of $((devices * 5)) fixes ($devices devices), $(wc -l < "$work/all.ndjson") events in all," \
    "checkpoint $(stat -c %s "$work/ref-state-0") bytes; one chunk runs in about $run_ms ms" >&2

landed=0 attempts=0 finished_first=0 in_write=0 kept_previous=0 kept_new=0 resumed=0
declare -A by_mode=([random]=0 [near-end]=0 [write]=0)
run="$work/run"
while [ "$landed" -lt "$kills" ]; do
    attempts=$((attempts + 1))
    [ "$attempts" -le $((kills * 10)) ] || fail "only $landed kills landed in $attempts attempts"
    i=$((RANDOM % chunks))
    case $((attempts % 3)) in 0) mode=random ;; 1) mode=write ;; *) mode=near-end ;; esac
    rm -rf "$run"
    mkdir -p "$run"
    [ "$i" -eq 0 ] || cp "$work/ref-state-$((i - 1))" "$run/state"
    "$fence" eval "${opts[@]}" --positions "$work/chunk-$i.csv" --state "$run/state" --output "$run/out" 2>/dev/null &
    pid=$!
    case $mode in
        random) sleep "$(awk -v ms=$((RANDOM * run_ms / 32768)) 'BEGIN { printf "%.3f", ms / 1000 }')" ;;
        near-end) sleep "$(awk -v ms=$((run_ms * 7 / 10 + RANDOM * run_ms * 4 / 10 / 32768)) 'BEGIN { printf "%.3f", ms / 1000 }')" ;;
        write)
            # Busy-wait for the temporary file (write, fsync, rename follow), then kill at once
            # or a few milliseconds later.
            while [ ! -e "$run/.state.tmp-$pid" ] && kill -0 "$pid" 2>/dev/null; do :; done
            [ $((RANDOM % 2)) -eq 0 ] || sleep "0.00$((RANDOM % 9 + 1))"
            ;;
    esac
    kill -9 "$pid" 2>/dev/null || true
    set +e
    { wait "$pid"; } 2>/dev/null  # no "Killed" line from the shell
    rc=$?
    set -e
    if [ "$rc" -ne 137 ]; then
        [ "$rc" -eq 0 ] || fail "chunk $i exited $rc without being killed"
        cmp -s "$run/state" "$work/ref-state-$i" || fail "chunk $i finished but its checkpoint differs from the reference"
        finished_first=$((finished_first + 1))
        # Runs got faster than the reference runs were (a less loaded machine): aim earlier.
        [ "$mode" = write ] || run_ms=$((run_ms * 7 / 8))
        continue
    fi
    landed=$((landed + 1))
    by_mode[$mode]=$((by_mode[$mode] + 1))
    if compgen -G "$run/.state.tmp-*" >/dev/null; then in_write=$((in_write + 1)); fi
    # The state file now: the checkpoint before the chunk, or the one after it.
    if { [ "$i" -eq 0 ] && [ ! -e "$run/state" ]; } || { [ "$i" -gt 0 ] && cmp -s "$run/state" "$work/ref-state-$((i - 1))"; }; then
        kept_previous=$((kept_previous + 1))
        next=$i
    elif cmp -s "$run/state" "$work/ref-state-$i"; then
        kept_new=$((kept_new + 1))
        next=$((i + 1))
    else
        fail "kill $landed (chunk $i, $mode): the state file is neither the previous nor the new checkpoint ($(stat -c %s "$run/state" 2>/dev/null || echo missing) bytes)"
    fi
    # Resume from what survived: the same events and checkpoint as the uninterrupted sequence.
    if [ "$next" -lt "$chunks" ]; then
        "$fence" eval "${opts[@]}" --positions "$work/chunk-$next.csv" --state "$run/state" --output "$run/resumed" 2>"$run/err" \
            || fail "kill $landed: resuming chunk $next from the surviving checkpoint failed: $(cat "$run/err")"
        cmp -s "$run/resumed" "$work/ref-events-$next" || fail "kill $landed: chunk $next resumed gives other events than the reference"
        cmp -s "$run/state" "$work/ref-state-$next" || fail "kill $landed: chunk $next resumed leaves another checkpoint than the reference"
    else
        # The last chunk had completed: the checkpoint must still be readable.
        printf 'device,time,lon,lat\n' | "$fence" eval "${opts[@]}" --positions - --state "$run/state" --output /dev/null 2>"$run/err" \
            || fail "kill $landed: the final checkpoint is not readable: $(cat "$run/err")"
    fi
    ! compgen -G "$run/.state.tmp-*" >/dev/null || fail "kill $landed: a killed writer's temporary file is left after the next write"
    resumed=$((resumed + 1))
done
echo "crash: $landed kills (${by_mode[random]} at a random time, ${by_mode[near-end]} near the end, ${by_mode[write]} on the checkpoint write)" \
    "in $attempts attempts ($finished_first runs finished first); killed with the temporary file open: $in_write;" \
    "state afterwards the previous checkpoint $kept_previous times, the new one $kept_new times, never torn;" \
    "$resumed resumes gave the reference events and checkpoint"
