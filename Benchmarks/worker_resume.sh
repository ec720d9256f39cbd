#!/usr/bin/env bash
# Resuming with a backlog: on a private nats-server (127.0.0.1, a random port, file storage
# under a temporary folder), a `fence worker` drains the first half of the fixes and stops
# (SIGTERM: a checkpoint), the second half is published while it is down, and a new session
# drains it. Prints both drain times. The README's "Limits of the worker".
#
#   bash Benchmarks/worker_resume.sh FENCE_BIN FIXES.csv FENCES.geojson
#
# Environment: P partitions (4). Make the data with
#   fence-bench --fences 10000 --events 20000 --fixes 200000 --parse 200000 --geojson F.geojson --check 0
# and take its first 90,000 lines (head -90001 fence-bench-fixes.csv): both halves then fit in
# the stream's first (and last) file-store block, where nats-server 2.9 was slow to resume.
set -euo pipefail
F=$1; CSV=$2; FENCES=$3; P=${P:-4}
source "$(dirname "$0")/nats_server.sh"
n=$(($(wc -l < "$CSV") - 1)); half=$((n / 2))
head -n $((half + 1)) "$CSV" > "$dir/first.csv"
(head -n 1 "$CSV"; tail -n $((n - half)) "$CSV") > "$dir/second.csv"
run_worker() {
  "$F" worker --nats "$url" --partitions "$(seq -s, 0 $((P - 1)))" --fences "$FENCES" --lateness 60 --threads 2 >> "$dir/worker.log" 2>&1 &
  worker=$!
  local start=$(date +%s.%N)
  "$F" status --nats "$url" --wait-drained --timeout 600 > "$dir/status.log"
  local end=$(date +%s.%N)
  echo "$1: drained after $(echo "$end - $start" | bc) s"
  kill -TERM $worker; wait $worker || true
}
"$F" publish --nats "$url" --positions "$dir/first.csv" --window 60 2>&1 | tail -1
run_worker "first half"
"$F" publish --nats "$url" --positions "$dir/second.csv" --window 60 2>&1 | tail -1
ls -la "$dir/store/jetstream/\$G/streams/FENCE_FIXES/msgs/" | grep blk | awk '{print $5, $9}' | tr '\n' ' '; echo
run_worker "resumed with the second half"
grep -i "resuming" "$dir/worker.log" | head -4
