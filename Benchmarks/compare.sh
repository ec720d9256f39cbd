#!/usr/bin/env bash
# fence-bench and the peer (shapely 2's STRtree, from PyPI, in a venv made here) on identical
# data in one run; prints, per case, both throughputs and the ratio. Both sides must find the
# same (position, fence) pairs before any time counts.
#
#   bash Benchmarks/compare.sh                 # the standard cases and issue 5's checks
#   bash Benchmarks/compare.sh --fences 10000  # extra fence-bench options for a quick look
#
# The standard run also times full events (100k devices, 2M fixes; 16-vertex fences with 20%
# circles) at 10k and 1M fences, and loads 5M fences for their memory (COMPARE_5M=0 skips
# that: it needs about 7 GB), then prints each acceptance figure of issue 5 beside its target.
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
    "$bench" --fences 10000,1000000 --vertices 16 --hits 0.65 --threads 2 --repeat 3 \
        --events 100000 --fixes 2000000 --positions 1000000 | tee -a "$out/events.jsonl" >&2
    if [ "${COMPARE_5M:-1}" != 0 ]; then
        "$bench" --fences 5000000 --vertices 16 --hits 0.65 --threads 2 --positions 1000000 \
            | tee -a "$out/large.jsonl" >&2
    fi
fi

"$venv/bin/python" - "$out" <<'PY'
import json, os, sys
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

events = [json.loads(l) for l in open(f"{out}/events.jsonl") if l.startswith("{")] if os.path.exists(f"{out}/events.jsonl") else []
large = [json.loads(l) for l in open(f"{out}/large.jsonl") if l.startswith("{")] if os.path.exists(f"{out}/large.jsonl") else []
if events:
    def one(rows, **want):
        got = [r for r in rows if all(r.get(k) == v for k, v in want.items())]
        return got[0] if got else None
    ev1m = one(events, case="events", fences=1000000)
    ev10k = one(events, case="events", fences=10000)
    c1m = one(ours, case="containment", fences=1000000, vertices=16)
    c10k = one(ours, case="containment", fences=10000, vertices=16)
    def ratio(fences, vertices):
        o = one(ours, case="containment", fences=fences, vertices=vertices)
        rows = [p for p in peer if p["fences"] == fences and p["vertices"] == vertices]
        if not o or not rows or not all(p["agrees"] for p in rows):
            return float("nan")
        return o["positions_per_s"] / max(p["positions_per_s"] for p in rows)
    print()
    print("| issue 5 acceptance | measured | target | met |")
    print("| --- | --- | --- | --- |")
    def row(name, value, target, fmt, ok):
        print(f"| {name} | {fmt.format(value)} | {target} | {'yes' if ok else 'no'} |")
    if ev1m:
        row("events, 1M fences, 100k devices (fixes/s)", ev1m["fixes_per_s"], ">= 4,000,000", "{:,}", ev1m["fixes_per_s"] >= 4_000_000)
    r = ratio(1000000, 16)
    row("containment vs shapely, 1M fences x 16 vertices", r, ">= 20x", "{:.1f}x", r >= 20)
    r = ratio(100000, 1000)
    row("containment vs shapely, 100k fences x 1000 vertices", r, ">= 20x", "{:.1f}x", r >= 20)
    if c1m and c10k:
        k = c1m["positions_per_s"] / c10k["positions_per_s"]
        row("containment kept from 10k to 1M fences", k, ">= 60%", "{:.0%}", k >= 0.6)
    if ev1m and ev10k:
        k = ev1m["fixes_per_s"] / ev10k["fixes_per_s"]
        row("events kept from 10k to 1M fences", k, ">= 60%", "{:.0%}", k >= 0.6)
    if ev1m:
        row("events as a share of the R-tree probe alone, 1M fences", ev1m["share_of_probe"], ">= 50%", "{:.0%}", ev1m["share_of_probe"] >= 0.5)
    big = one(large, case="containment", fences=5000000)
    if big:
        row("5M fences x 16 vertices: resident bytes per fence", big["rss_bytes_per_fence"], "< 1,024", "{:,}", big["rss_bytes_per_fence"] < 1024)
PY
