#!/usr/bin/env bash
# One `fence worker` draining a fix stream on a private nats-server (127.0.0.1, a random port,
# file storage under a temporary folder): prints the drain time and the CPU seconds of the
# worker and of the server while it drained. The README's "Small messages, large partitions".
#
#   bash Benchmarks/worker_stream.sh FENCE_BIN FIXES.csv FENCES.geojson
#
# Environment: P partitions (4), WINDOW for `fence publish` (60), LATENESS for the worker (60),
# THREADS (2), WARGS more worker options. Make the data with
#   fence-bench --fences 10000 --events 100000 --fixes 2000000 --parse 2000000 --geojson F.geojson --check 0
# (it writes ./fence-bench-fixes.csv). Needs nats-server (`.ci/setup` installs it).
set -euo pipefail
F=$1; CSV=$2; FENCES=$3; P=${P:-4}
source "$(dirname "$0")/nats_server.sh"
"$F" publish --nats "$url" --positions "$CSV" --window "${WINDOW:-60}" 2>&1 | tail -1
start=$(date +%s.%N)
"$F" worker --nats "$url" --partitions "$(seq -s, 0 $((P - 1)))" --fences "$FENCES" --lateness "${LATENESS:-60}" \
    --threads "${THREADS:-2}" ${WARGS:-} > "$dir/worker.log" 2>&1 &
worker=$!
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
server0=$(ticks $server)
"$F" status --nats "$url" --wait-drained --timeout 600 > "$dir/status.log"
end=$(date +%s.%N)
hz=$(getconf CLK_TCK)
echo "drained after $(echo "$end - $start" | bc) s; worker CPU $(echo "scale=2; $(ticks $worker) / $hz" | bc) s;" \
    "server CPU while draining $(echo "scale=2; ($(ticks $server) - $server0) / $hz" | bc) s"
kill -TERM $worker
wait $worker || true
