"""How many fleet fixes a per-device safe region could spare the containment step.

A design question from issue 5 (events at half the R-tree probe's rate): if each device kept
the distance r from its last evaluated fix to the nearest fence boundary, a later fix within r
of that fix is in exactly the same fences, and containment could be skipped for it. This
estimates the best case: r is the exact distance to the nearest boundary (any practical
bound, say from boxes, is smaller), on fences and walks drawn as fence-bench draws them
(Benchmarks/FenceBench/Scenario.swift), at the density of N fences over its 20 x 20 degree
region, in a 2 x 2 degree patch of it.

    Benchmarks/peers/.venv/bin/python Benchmarks/analysis/safe_regions.py [N ...]

Prints, per N, the share of fixes that would still need containment.
"""
import math
import sys

import numpy as np
import shapely
from shapely import STRtree


def evaluated_share(fence_count, hits=0.65, circle_share=0.2, walkers=2000, steps=20, seed=1):
    rng = np.random.default_rng(seed)
    per_fence = hits * 400 / fence_count
    shape = 1.03 * (circle_share + (1 - circle_share) * 0.73)
    mean = math.sqrt(per_fence / (math.pi * shape / math.cos(math.pi / 4)))
    width = 2.0
    fences = []
    for _ in range(int(fence_count / 400 * width * width)):
        lon, lat = rng.uniform(4, 4 + width), rng.uniform(44, 44 + width)
        r = mean * rng.uniform(0.7, 1.3)
        sc = 1 / math.cos(math.radians(lat))
        if rng.uniform() < circle_share:
            a = np.linspace(0, 2 * math.pi, 64, endpoint=False)
            ring = np.c_[lon + r * np.cos(a) * sc, lat + r * np.sin(a)]
        else:
            phase = rng.uniform(0, 2 * math.pi)
            ring = []
            for k in range(16):
                angle = phase + 2 * math.pi * k / 16
                rr = r if k % 2 == 0 else r * rng.uniform(0.5, 1)
                ring.append((lon + rr * math.cos(angle) * sc, lat + rr * math.sin(angle)))
        fences.append(shapely.Polygon(ring))
    tree = STRtree(shapely.boundary(np.array(fences)))

    def radius(x, y):
        return tree.query_nearest(shapely.points(x, y), return_distance=True)[1]

    # Random walks as Scenario.fleet draws them, kept in the patch's middle.
    lat = rng.uniform(44.5, 45.5, walkers)
    lon = rng.uniform(4.5, 5.5, walkers)
    heading = rng.uniform(0, 2 * math.pi, walkers)
    metres = rng.uniform(5, 30, walkers) * rng.uniform(1, 30, walkers)
    ax, ay, r = lon.copy(), lat.copy(), radius(lon, lat)
    evaluated, total = walkers, walkers
    for _ in range(1, steps):
        heading += rng.uniform(-0.3, 0.3, walkers)
        lat = lat + metres * np.cos(heading) / 111_132
        lon = lon + metres * np.sin(heading) / (111_320 * np.cos(np.radians(lat)))
        need = np.hypot(lon - ax, lat - ay) >= r
        total += walkers
        evaluated += int(need.sum())
        ax[need], ay[need] = lon[need], lat[need]
        r[need] = radius(lon[need], lat[need])
    return evaluated / total


if __name__ == "__main__":
    for n in [int(a) for a in sys.argv[1:]] or [10_000, 1_000_000]:
        print(f"{n:>9,} fences: {evaluated_share(n):.0%} of fixes still need containment")
