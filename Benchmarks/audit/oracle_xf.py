#!/usr/bin/env python3
"""oracle.py with a faster, still exact-by-geodesic cross test for circles: a local projection
screens segments whose closest approach is far (> 2% of r + 20 m) from the radius."""
import os, sys, math
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle
from oracle import *
_orig = oracle.crossed
def crossed(idx, p, q, t, cb):
    _, fs = oracle.segment_candidates(idx, p, q, t, cb)
    if any(F.kind != 'circle' for F in fs):
        return _orig(idx, p, q, t, cb)
    out = []
    for F in fs:
        kx = 111320 * math.cos(math.radians(F.lat)); ky = 110574
        ax, ay = (p[3] - F.lon) * kx, (p[4] - F.lat) * ky
        bx, by = (q[3] - F.lon) * kx, (q[4] - F.lat) * ky
        dx, dy = bx - ax, by - ay; L = dx * dx + dy * dy
        s = 0.0 if L == 0 else max(0.0, min(1.0, -(ax * dx + ay * dy) / L))
        dapp = math.hypot(ax + s * dx, ay + s * dy)
        tol = 0.02 * F.r + 20
        if dapp > F.r + tol: continue
        if dapp < F.r - tol: out.append((F, False)); continue
        f = lambda s: G.Inverse(F.lat, F.lon, p[4] + s * (q[4] - p[4]), p[3] + s * (q[3] - p[3]))['s12']
        dmin = oracle._gss(f, 0.0, 1.0)
        if dmin <= F.r: out.append((F, abs(dmin - F.r) < 1e-3))
        elif dmin - F.r < 1e-3: out.append((F, True))
    return out
oracle.crossed = crossed
if __name__ == '__main__':
    sys.argv[0] = oracle.__file__
    exec(compile(open(oracle.__file__).read().split("if __name__ == '__main__':")[1].replace('\n    ', '\n'), 'main', 'exec'), {**oracle.__dict__, 'crossed': crossed})
