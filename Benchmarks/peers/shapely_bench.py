#!/usr/bin/env python3
"""The peer: shapely 2's STRtree on the data fence-bench --export wrote, both recipes.

    shapely_bench.py DIR [DIR ...]

For each DIR (fences.npy, positions.npy, pairs.npy) it times
  A. an STRtree over the fences, queried with the points, predicate 'covered_by'
     (boundary inside, as the engine's `covers`); the tree build is set-up, not timed;
  B. an STRtree over the points, queried with the fences, predicate 'covers'
     (shapely prepares each query polygon); the tree build is part of the work, timed;
checks that each recipe finds exactly the engine's (position, fence) pairs, and prints one
JSON line per recipe with positions per second. Single-threaded, as shapely runs.
"""
import json
import sys
import time

import numpy as np
import shapely
from shapely import STRtree


def pairs_set(a, b):
    return set(zip(a.tolist(), b.tolist()))


def run(directory):
    fences = np.load(f"{directory}/fences.npy")
    positions = np.load(f"{directory}/positions.npy")
    expected = np.load(f"{directory}/pairs.npy")
    polys = shapely.polygons(fences)
    points = shapely.points(positions)
    want = pairs_set(expected[:, 0], expected[:, 1]) if len(expected) else set()
    m = len(points)
    base = {"peer": "shapely", "shapely": shapely.__version__, "geos": shapely.geos_version_string,
            "fences": int(len(polys)), "vertices": int(fences.shape[1] - 1), "positions": m}

    # A: tree over fences (built once, like the engine's index), points queried.
    tree = STRtree(polys)
    t0 = time.perf_counter()
    idx = tree.query(points, predicate="covered_by")
    seconds = time.perf_counter() - t0
    got = pairs_set(idx[0], idx[1])
    print(json.dumps(dict(base, recipe="tree-over-fences", seconds=round(seconds, 3),
                          positions_per_s=int(m / seconds), agrees=got == want,
                          pairs=len(got), expected_pairs=len(want))), flush=True)

    # B: tree over the points (per batch), each fence prepared and queried.
    t0 = time.perf_counter()
    tree = STRtree(points)
    idx = tree.query(polys, predicate="covers")
    seconds = time.perf_counter() - t0
    got = pairs_set(idx[1], idx[0])
    print(json.dumps(dict(base, recipe="tree-over-points", seconds=round(seconds, 3),
                          positions_per_s=int(m / seconds), agrees=got == want,
                          pairs=len(got), expected_pairs=len(want))), flush=True)


if __name__ == "__main__":
    for d in sys.argv[1:]:
        run(d)
