#!/usr/bin/env python3
"""Oracle with hysteresis (--margin, accuracy) and --exit-delay, from SPEC + README 'Limits'."""
import os
import sys, json, math, argparse
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import *
from shapely.geometry import Point, box
import shapely
A = 6378137.0; F_ = 1 / 298.257223563; E2 = F_ * (2 - F_)

def local_scales(lat):
    s = math.sin(math.radians(lat))
    w = math.sqrt(1 - E2 * s * s)
    N = A / w; M = A * (1 - E2) / w ** 3
    return M * math.pi / 180, N * math.cos(math.radians(lat)) * math.pi / 180

TOL = 1e-9

def _merge(spans):
    out = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]: out[-1][1] = max(out[-1][1], hi)
        else: out.append([lo, hi])
    return out

def _minus(lo, hi, cover):
    parts = [(lo, hi)]
    for clo, chi in cover:
        nxt = []
        for a, b in parts:
            if chi <= a or clo >= b: nxt.append((a, b)); continue
            if a < clo: nxt.append((a, clo))
            if chi < b: nxt.append((chi, b))
        parts = nxt
    return parts

_boundaries = {}

def real_boundary(F):
    """A polygon's edges as the README's distance paragraph counts them: edges on +180 / -180
    over latitudes the other side also covers (an RFC 7946 cut) and edges along latitude +-90
    (one point on the globe) left out (session 39's audit: margins measured to them)."""
    # cached on the fence itself: keyed by id alone, a process running many worlds (fuzz.py)
    # measured margins to another world's fence of the same id (session 40's audit)
    if getattr(F, '_real_boundary', None) is not None: return F._real_boundary
    from shapely.geometry import MultiLineString
    polys = F.sg.geoms if F.sg.geom_type == 'MultiPolygon' else [F.sg]
    edges = []
    for p in polys:
        for r in [p.exterior] + list(p.interiors):
            c = list(r.coords)
            edges += list(zip(c, c[1:]))
    on = lambda a, b, s: (a[0] >= 180 - TOL and b[0] >= 180 - TOL) if s > 0 else (a[0] <= -180 + TOL and b[0] <= -180 + TOL)
    east = _merge([[min(a[1], b[1]), max(a[1], b[1])] for a, b in edges if on(a, b, 1)])
    west = _merge([[min(a[1], b[1]), max(a[1], b[1])] for a, b in edges if on(a, b, -1)])
    lines = []
    for a, b in edges:
        if abs(a[1]) >= 90 - TOL and abs(b[1]) >= 90 - TOL and (a[1] > 0) == (b[1] > 0): continue
        s = 1 if on(a, b, 1) else (-1 if on(a, b, -1) else 0)
        if s == 0: lines.append([a, b]); continue
        for lo, hi in _minus(min(a[1], b[1]), max(a[1], b[1]), west if s > 0 else east):
            lines.append([(a[0], lo), (a[0], hi)])
    F._real_boundary = MultiLineString(lines)
    return F._real_boundary

def signed_dist(F, lon, lat):
    """metres, negative inside; polygons measured to `real_boundary`, across the antimeridian
    too (the boundary shifted by +-360)."""
    if F.kind == 'circle':
        return G.Inverse(F.lat, F.lon, lat, lon)['s12'] - F.r
    ky, kx = local_scales(lat)
    b = real_boundary(F)
    d = math.inf
    for sh in (0, 360, -360):
        g = shapely.transform(b, lambda c: np.column_stack(((c[:, 0] + sh - lon) * kx, (c[:, 1] - lat) * ky)))
        d = min(d, g.distance(Point(0, 0)))
    return -d if F.sg.covers(Point(lon, lat)) else d

import numpy as np

def classify(idx, fx, margin, t):
    """per fence near/inside: (F, signed distance, effective margin)"""
    lon, lat = fx[3], fx[4]
    e = margin + (fx[5] or 0) if margin > 0 else 0
    deg = (e + 5) / 60000.0
    out = []
    for i in idx.tree.query(box(lon - deg * 1.7, lat - deg, lon + deg * 1.7, lat + deg)):
        F = idx.f[i]
        if F.exp_ms is not None and t >= F.exp_ms: continue
        d = signed_dist(F, lon, lat)
        if d < e: out.append((F, d, e))
    return out

def ambiguous(idx, fx, margin, tol=0.5):
    for F, d, e in classify(idx, fx, margin + 2 * tol, fx[2]) + []:
        pass
    lon, lat = fx[3], fx[4]
    e = margin + (fx[5] or 0) if margin > 0 else 0
    deg = (e + 5) / 60000.0
    for i in idx.tree.query(box(lon - deg * 1.7, lat - deg, lon + deg * 1.7, lat + deg)):
        F = idx.f[i]
        d = signed_dist(F, lon, lat)
        if abs(d - e) < tol or abs(d + e) < tol or abs(d) < tol: return True
    return False

def evaluate_h(fences, fixes, margin=0.0, delay_ms=0, engine_actions=ALL, dwell_default_ms=600000, initial=True, batch=None, idle_ms=0):
    idx = Index(fences)
    if batch: fixes = batch_filter(fixes, batch)[0]
    else: fixes = [fx + (None,) for fx in fixes]
    clock_ms = max(fx[2] for fx in fixes)
    bydev = {}
    for fx in fixes: bydev.setdefault(fx[1], []).append(fx)
    emit = Emitter(engine_actions)
    for dev, fl in bydev.items():
        fl = sorted(fl, key=lambda x: (x[2], x[0]))
        seen = set(); ordered = []
        for fx in fl:
            if fx[2] in seen: continue
            seen.add(fx[2]); ordered.append(fx)
        st = {}   # fid -> dict(status, F, enter, stayed, pending)
        last = None
        def expire_until(t):
            for fid in sorted(st, key=lambda k: (st[k]['F'].exp_ms or 0, k.encode())):
                v = st[fid]; F = v['F']
                if F.exp_ms is not None and F.exp_ms <= t and F.exp_ms <= clock_ms:
                    if v['status'] == 'inside':
                        emit(F.exp_ms, dev, F, 'exit', last[3], last[4], reason='fence-expired', inside_s=(F.exp_ms - v['enter']) / 1000)
                    del st[fid]
        S = max(idle_ms, delay_ms) if idle_ms else 0
        def evict(it):
            expire_until(it)
            for fid in sorted(st, key=lambda q: q.encode()):
                v = st.pop(fid)
                if v['status'] == 'inside':
                    emit(it, dev, v['F'], 'exit', last[3], last[4], reason='device-idle', inside_s=(last[2] - v['enter']) / 1000)
        # Also on the entering fix: with dwell 0 it is the first fix at or after enter + dwell
        # (SPEC), so dwell follows its enter.
        def dwell_if_due(v, F, t, dev, lon, lat):
            dw = F.dwell_ms if F.dwell_ms is not None else dwell_default_ms
            if not v['stayed'] and t >= v['enter'] + dw:
                v['stayed'] = True
                emit(t, dev, F, 'dwell', lon, lat, inside_s=(t - v['enter']) / 1000)
        k = 0
        for fx in ordered:
            t, lon, lat, cb = fx[2], fx[3], fx[4], fx[6]
            if S and last is not None and t - last[2] >= S:
                evict(last[2] + S); k = 0
            expire_until(t if cb is None else max(t, cb))
            near = {F.id: (F, d, e) for F, d, e in classify(idx, fx, margin, t) if cb is None or F.exp_ms is None or cb < F.exp_ms}
            # pairs with a status
            for fid in sorted(set(st) | set(near), key=lambda s: s.encode()):
                if fid in near: F, d, e = near[fid]
                else: F, d, e = st[fid]['F'], math.inf, 0
                inside_m = (d <= -e) if e > 0 else (d <= 0)
                outside_m = (d >= e) if e > 0 else (d > 0)
                v = st.get(fid)
                if v is None:
                    if inside_m:
                        st[fid] = dict(status='inside', F=F, enter=t, stayed=False, pending=None)
                        if k == 0:
                            if initial: emit(t, dev, F, 'enter', lon, lat, initial=True)
                        else: emit(t, dev, F, 'enter', lon, lat)
                        dwell_if_due(st[fid], F, t, dev, lon, lat)
                    elif not outside_m and k == 0:
                        st[fid] = dict(status='unknown', F=F)
                    continue
                if v['status'] == 'unknown':
                    if inside_m:
                        st[fid] = dict(status='inside', F=F, enter=t, stayed=False, pending=None)
                        if initial: emit(t, dev, F, 'enter', lon, lat, initial=True)
                        dwell_if_due(st[fid], F, t, dev, lon, lat)
                    elif outside_m: del st[fid]
                    continue
                # inside / stayed
                if outside_m:
                    if v['pending'] is None: v['pending'] = t
                    if t - v['pending'] >= delay_ms:
                        emit(t, dev, F, 'exit', lon, lat, inside_s=(t - v['enter']) / 1000)
                        del st[fid]
                    continue
                v['pending'] = None
                dwell_if_due(v, F, t, dev, lon, lat)
            last = fx; k += 1
        if S and clock_ms - last[2] >= S: evict(last[2] + S)
        expire_until(clock_ms)
    return emit.records()

if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--fences'); ap.add_argument('--positions')
    ap.add_argument('--margin', type=float, default=0); ap.add_argument('--exit-delay', type=float, default=0)
    ap.add_argument('--actions', default='enter,exit,dwell'); ap.add_argument('--dwell', type=float, default=600)
    ap.add_argument('--no-initial', action='store_true'); ap.add_argument('--batch', type=int); ap.add_argument('--evict-idle', type=float, default=0)
    ap.add_argument('--filter-out')   # write a copy of positions without ambiguous fixes
    a = ap.parse_args()
    fences = load_fences(a.fences)
    good, bad = parse_positions(a.positions)
    if a.filter_out:
        idx = Index(fences)
        badl = {fx[0] for fx in good if ambiguous(idx, fx, a.margin)}
        lines = open(a.positions).read().splitlines()
        with open(a.filter_out, 'w') as fh:
            for i, l in enumerate(lines, 1):
                if i not in badl: fh.write(l + '\n')
        print('dropped', len(badl), file=sys.stderr); sys.exit(0)
    for r in evaluate_h(fences, good, a.margin, int(a.exit_delay * 1000), set(a.actions.split(',')), int(a.dwell * 1000), not a.no_initial, a.batch, int(a.evict_idle * 1000)):
        print(json.dumps(r))
