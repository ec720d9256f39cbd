#!/usr/bin/env bash
# Fuzzes the input paths with libFuzzer under the address sanitizer, one target at a time.
#
#   bash Tests/Fuzz/fuzz.sh [SECONDS] [TARGET...]   fuzz each target for SECONDS (default 600)
#   bash Tests/Fuzz/fuzz.sh --replay [TARGET...]    run the seeds, every kept crasher and the
#                                                    local grown corpus (if any) once
#
# Targets: positions-csv positions-ndjson fences checkpoint wkb (default: all five).
# The growing corpus lives in .build/fuzz-corpus/TARGET (kept between runs, not in git); the
# seeds in Tests/Fuzz/corpus/TARGET are small and hand-written. A crashing input is written to
# Tests/Fuzz/crashers/TARGET/, which is in git: once fixed, it stays as a regression input,
# replayed by --replay and by FenceIOTests' FuzzRegressionTests in every `swift test`.
# One line per target goes to standard output and to .build/fuzz-results.tsv: target,
# seconds run (of those asked), executions, corpus files, corpus bytes, new crashers.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
source .ci/setup

replay=0
if [ "${1:-}" = "--replay" ]; then
    replay=1
    shift
fi
seconds=600
if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
    seconds=$1
    shift
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(positions-csv positions-ndjson fences checkpoint wkb)

product() {
    case "$1" in
        nats) echo FuzzNATSMessages ;;
        positions-csv) echo FuzzPositionsCSV ;;
        positions-ndjson) echo FuzzPositionsNDJSON ;;
        fences) echo FuzzFences ;;
        checkpoint) echo FuzzCheckpoint ;;
        wkb) echo FuzzWKB ;;
        *) echo "fuzz: unknown target $1" >&2; exit 2 ;;
    esac
}
max_len() {
    case "$1" in
        checkpoint) echo 4096 ;;
        *) echo 16384 ;;
    esac
}

# nats: what a fence worker decodes off the network (fix batches, fence changes, partition
# checkpoints and their heads); part of the default list.
[ "$#" -gt 0 ] || targets+=(nats)

scratch="$root/.build/fuzz"
build_log=$(mktemp)
if ! (cd "$here" && swift build -c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library \
    --scratch-path "$scratch" >"$build_log" 2>&1); then
    # gold warns about every ASan helper symbol; the errors are what matters.
    grep -vE "Cannot export local symbol" "$build_log" | tail -n 40 >&2
    rm -f "$build_log"
    echo "fuzz: the fuzz targets did not build" >&2
    exit 1
fi
rm -f "$build_log"
bin="$scratch/debug"
export ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:handle_abort=1"

status=0
for t in "${targets[@]}"; do
    p=$(product "$t")
    [ -x "$bin/$p" ] || { echo "fuzz: $bin/$p was not built" >&2; exit 1; }
    seeds="$here/corpus/$t"
    crashers="$here/crashers/$t"
    mkdir -p "$crashers"
    log=$(mktemp)
    if [ "$replay" = 1 ]; then
        set +e
        dirs=("$seeds" "$crashers")
        [ ! -d "$root/.build/fuzz-corpus/$t" ] || dirs+=("$root/.build/fuzz-corpus/$t")
        "$bin/$p" -runs=0 -rss_limit_mb=2048 -timeout=20 "${dirs[@]}" >"$log" 2>&1
        rc=$?
        set -e
        n=$(( $(find "${dirs[@]}" -type f | wc -l) ))
        if [ "$rc" -ne 0 ]; then
            tail -n 40 "$log" >&2
            echo "fuzz replay $t: FAILED on one of $n inputs" >&2
            status=1
        else
            echo "fuzz replay $t: $n inputs (seeds, crashers, grown corpus), no crash"
        fi
        rm -f "$log"
        continue
    fi
    work="$root/.build/fuzz-corpus/$t"
    mkdir -p "$work"
    before=$(find "$crashers" -type f | wc -l)
    started=$SECONDS
    set +e
    "$bin/$p" -max_total_time="$seconds" -max_len="$(max_len "$t")" -rss_limit_mb=2048 -timeout=20 \
        -print_final_stats=1 -artifact_prefix="$crashers/" "$work" "$seeds" >"$log" 2>&1
    rc=$?
    set -e
    after=$(find "$crashers" -type f | wc -l)
    execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}' | tail -n 1)
    files=$(find "$work" -type f | wc -l)
    bytes=$(du -sb "$work" | cut -f1)
    # The time it ran: shorter than asked when an input crashed it.
    line="$t	$((SECONDS - started))s of ${seconds}s	${execs:-?} execs	$files corpus files	$bytes bytes	$((after - before)) new crashers"
    echo "$line"
    echo "$(date -u +%FT%TZ)	$line" >> "$root/.build/fuzz-results.tsv"
    if [ "$rc" -ne 0 ] || [ "$after" -gt "$before" ]; then
        grep -vE '^#[0-9]+' "$log" | tail -n 60 >&2
        echo "fuzz $t: crashed (exit $rc); the input is in $crashers" >&2
        status=1
    fi
    rm -f "$log"
done
exit $status
