#!/usr/bin/env bash
# fence-bench and the peer (shapely 2's STRtree, from PyPI, in a venv made here) on identical
# data in one run; prints, per case, both throughputs and the ratio. Both sides must find the
# same (position, fence) pairs before any time counts.
#
#   bash Benchmarks/compare.sh                 # the standard cases
#   bash Benchmarks/compare.sh --fences 10000  # extra fence-bench options for a quick look
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/setup
venv=Benchmarks/peers/.venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "shapely>=2,<3" numpy
fi
swift build -c release --product fence-bench >&2
bench="$(swift build -c release --show-bin-path)/fence-bench"
out=Benchmarks/out
rm -rf "$out"
mkdir -p "$out"

run_case() {  # name, fence-bench options...
    local name=$1
    shift
    "$bench" --circles 0 --threads 2 --repeat 3 --export "$out/$name" "$@" | tee -a "$out/engine.jsonl" >&2
    for dir in "$out/$name"/*/; do
        "$venv/bin/python" Benchmarks/peers/shapely_bench.py "$dir" | sed "s/^{/{\"case\": \"$name\", /" | tee -a "$out/peer.jsonl" >&2
    done
}

if [ $# -gt 0 ]; then
    run_case custom "$@"
else
    run_case v16 --fences 10000,100000,1000000 --vertices 16 --hits 0.65 --positions 1000000
    run_case v1000 --fences 100000 --vertices 1000 --hits 0.65 --positions 1000000
fi

"$venv/bin/python" - "$out" <<'PY'
import json, sys
out = sys.argv[1]
ours = [json.loads(l) for l in open(f"{out}/engine.jsonl") if l.startswith("{")]
peer = [json.loads(l) for l in open(f"{out}/peer.jsonl")]
print("| fences | vertices | engine pos/s (2 threads) | shapely best pos/s (1 thread) | recipe | agree | ratio |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for o in ours:
    if o.get("case") != "containment":
        continue
    rows = [p for p in peer if p["fences"] == o["fences"] and p["vertices"] == o["vertices"]]
    if not rows:
        continue
    best = max(rows, key=lambda p: p["positions_per_s"])
    agree = all(p["agrees"] for p in rows)
    ratio = o["positions_per_s"] / best["positions_per_s"] if agree else float("nan")
    print(f"| {o['fences']:,} | {o['vertices']} | {o['positions_per_s']:,} | {best['positions_per_s']:,} | "
          f"{best['recipe']} | {'yes' if agree else 'NO'} | {ratio:.1f}x |")
PY
