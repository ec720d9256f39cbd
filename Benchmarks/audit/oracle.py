#!/usr/bin/env python3
"""Independent oracle for `fence eval` / `fence contains`, from SPEC.md + README only."""
import json, math, sys, csv, re, datetime as dt, argparse
from shapely.geometry import shape, Point
from shapely.strtree import STRtree
from shapely import prepared
from geographiclib.geodesic import Geodesic
G = Geodesic.WGS84

def parse_time_ms(s):
    """epoch seconds (int/frac) or ISO 8601 -> integer milliseconds; None if bad."""
    if isinstance(s, (int, float)) and not isinstance(s, bool):
        if not math.isfinite(s): return None
        return int(round(s * 1000))
    s = str(s).strip()
    if re.fullmatch(r'-?\d+(\.\d+)?', s):
        from decimal import Decimal
        return int((Decimal(s) * 1000).to_integral_value())
    s2 = s
    if s2.endswith(' UTC') or s2.endswith(' GMT'): s2 = s2[:-4] + 'Z'
    m = re.fullmatch(r'(\d{4})-?(\d{2})-?(\d{2})[T ](\d{2}):?(\d{2}):?(\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?', s2)
    if not m: return None
    y, mo, d, h, mi, se = map(int, m.groups()[:6])
    frac = m.group(7) or ''
    ms = int(round(float('0' + frac) * 1000)) if frac else 0
    tz = m.group(8)
    try:
        base = dt.datetime(y, mo, d, h, mi, se, tzinfo=dt.timezone.utc)
    except ValueError:
        return None
    off = 0
    if tz and tz != 'Z':
        sign = 1 if tz[0] == '+' else -1
        tzd = tz[1:].replace(':', '')
        off = sign * (int(tzd[:2]) * 3600 + int(tzd[2:]) * 60)
    return int(base.timestamp() - off) * 1000 + ms

def fmt_time(ms):
    d = dt.datetime.fromtimestamp(ms // 1000, dt.timezone.utc)
    return d.strftime('%Y-%m-%dT%H:%M:%S') + '.%03dZ' % (ms % 1000)

class Fence:
    pass

def load_fences(path):
    fc = json.load(open(path))
    out = []
    for f in fc['features']:
        p = f.get('properties') or {}
        x = Fence()
        x.id = str(p['id']) if 'id' in p else str(f['id'])
        x.group = p.get('group', p.get('customID'))
        a = p.get('actions')
        if isinstance(a, str): a = [s.strip() for s in a.split(',')]
        x.actions = set(a) if a is not None else None
        x.dwell_ms = int(round(float(p['dwell']) * 1000)) if 'dwell' in p else None
        x.exp_ms = parse_time_ms(p['expires']) if 'expires' in p else None
        g = f['geometry']; x.geom = g; x.r_ = p.get('radius')
        if g['type'] == 'Point':
            x.kind = 'circle'; x.lon, x.lat = g['coordinates']; x.r = float(p['radius'])
            dlat = x.r / 110000 * 1.02 + 1e-4
            dlon = x.r / (111320 * math.cos(math.radians(x.lat))) * 1.02 + 1e-4
            x.bbox = (x.lon - dlon, x.lat - dlat, x.lon + dlon, x.lat + dlat)
            from shapely.geometry import box
            x.sg = box(*x.bbox)
        else:
            x.kind = 'poly'; x.sg = shape(g); x.prep = prepared.prep(x.sg)
        out.append(x)
    return out

class Index:
    def __init__(self, fences):
        self.f = fences
        self.tree = STRtree([x.sg for x in fences])
    def covering(self, lon, lat, t_ms=None):
        res = []
        p = Point(lon, lat)
        for i in self.tree.query(p):
            x = self.f[i]
            if t_ms is not None and x.exp_ms is not None and t_ms >= x.exp_ms: continue
            if x.kind == 'circle':
                if G.Inverse(x.lat, x.lon, lat, lon)['s12'] <= x.r: res.append(x)
            else:
                if x.prep.covers(p): res.append(x)
        return res

def parse_positions(path):
    """returns list of (lineno, device, t_ms, lon, lat, acc) for good lines, and bad line numbers."""
    good, bad = [], []
    if path.endswith('.ndjson'):
        for ln, line in enumerate(open(path), 1):
            try:
                o = json.loads(line)
                dev = o['device']; t = parse_time_ms(o['time']); lon = float(o['lon']); lat = float(o['lat'])
                acc = o.get('accuracy')
                if not dev or t is None or not (math.isfinite(lon) and math.isfinite(lat)) or abs(lon) > 180 or abs(lat) > 90: raise ValueError
                good.append((ln, str(dev), t, lon, lat, acc))
            except Exception:
                bad.append(ln)
        return good, bad
    with open(path) as fh:
        header = fh.readline().strip().split(',')
        for ln, line in enumerate(fh, 2):
            cells = line.rstrip('\n').split(',')
            try:
                if len(cells) != len(header): raise ValueError
                r = dict(zip(header, cells))
                dev = r['device']; t = parse_time_ms(r['time']); lon = float(r['lon']); lat = float(r['lat'])
                acc = float(r['accuracy']) if r.get('accuracy') else None
                if not dev or t is None or not (math.isfinite(lon) and math.isfinite(lat)) or abs(lon) > 180 or abs(lat) > 90: raise ValueError
                good.append((ln, dev, t, lon, lat, acc))
            except Exception:
                bad.append(ln)
    return good, bad

ALL = {'enter', 'exit', 'dwell'}

def batch_filter(fixes, batch):
    """model of --batch N (N good lines a batch): returns applied fixes (each with clock before its batch), late, dup."""
    last = {}; clock = None; out = []; late = dup = 0
    bounds = [(b, b + batch) for b in range(0, len(fixes), batch)] if isinstance(batch, int) else list(zip([0] + batch, batch + [len(fixes)]))
    for b0, b1 in bounds:
        chunk = fixes[b0:b1]
        for fx in sorted(chunk, key=lambda x: (x[1], x[2], x[0])):
            l = last.get(fx[1])
            if l is not None and fx[2] < l: late += 1; continue
            if l is not None and fx[2] == l: dup += 1; continue
            last[fx[1]] = fx[2]
            out.append(fx + (clock,))
        cm = max(fx[2] for fx in chunk)
        clock = cm if clock is None else max(clock, cm)
    return out, late, dup

class Emitter:
    """The events an evaluation writes: a record per event as the engine writes it, kept when
    the mask that applies (the fence's own, else the engine's) reports its kind, and given out
    in (time, device bytes, fence bytes, emission order) order."""
    def __init__(self, engine_actions):
        self.engine_actions = engine_actions
        self.events = []  # (time_ms, device, fence, seq, record)
    def mask(self, F): return F.actions if F.actions is not None else self.engine_actions
    def __call__(self, t, dev, F, kind, lon, lat, **kw):
        rec = {'time': fmt_time(t), 'device': dev, 'fence': F.id}
        if F.group is not None: rec['group'] = str(F.group)
        rec['event'] = kind; rec['lon'] = lon; rec['lat'] = lat
        rec.update(kw)
        if kind in self.mask(F):
            self.events.append((t, dev.encode(), F.id.encode(), len(self.events), rec))
    def records(self):
        return [e[4] for e in sorted(self.events, key=lambda e: (e[0], e[1], e[2], e[3]))]

def evaluate(fences, fixes, engine_actions=ALL, dwell_default_ms=600000, initial=True, clock_ms=None, batch=None, idle_ms=0, cross=False, ambiguous=None):
    """fixes: good lines in file order. Returns (events, stats)."""
    idx = Index(fences)
    late = 0
    if batch:
        fixes, late, _ = batch_filter(fixes, batch)
    else:
        fixes = [fx + (None,) for fx in fixes]
    bydev = {}
    for fx in fixes:
        bydev.setdefault(fx[1], []).append(fx)
    if clock_ms is None:
        clock_ms = max(fx[2] for fx in fixes)
    dups = 0
    emit = Emitter(engine_actions)
    for dev, fl in bydev.items():
        fl = sorted(fl, key=lambda x: (x[2], x[0]))
        seen = set(); ordered = []
        for fx in fl:
            if fx[2] in seen: dups += 1; continue
            seen.add(fx[2]); ordered.append(fx)
        visits = {}  # fence id -> [F, enter_ms, stayed, last_lon, last_lat, last_t]
        last = None
        def expire_until(t):
            for fid in sorted(visits, key=lambda k: (visits[k][0].exp_ms or 0, k.encode())):
                v = visits[fid]; F = v[0]
                if F.exp_ms is not None and F.exp_ms <= t and F.exp_ms <= clock_ms:
                    emit(F.exp_ms, dev, F, 'exit', last[3], last[4], reason='fence-expired', inside_s=(F.exp_ms - v[1]) / 1000)
                    del visits[fid]
        k = 0
        def evict(idle_t):
            expire_until(idle_t)
            for fid in sorted(visits, key=lambda s: s.encode()):
                v = visits.pop(fid)
                emit(idle_t, dev, v[0], 'exit', last[3], last[4], reason='device-idle', inside_s=(last[2] - v[1]) / 1000)
        for fx in ordered:
            _, _, t, lon, lat, acc, cb = fx
            if idle_ms and last is not None and t - last[2] >= idle_ms:
                evict(last[2] + idle_ms); k = 0
            expire_until(t if cb is None else max(t, cb))
            cov = {F.id: F for F in idx.covering(lon, lat, t) if cb is None or F.exp_ms is None or cb < F.exp_ms}
            if cross and k > 0:
                for F, amb in crossed(idx, last, fx, t, cb):
                    if F.id in cov or F.id in visits: continue
                    if amb:
                        if ambiguous is not None: ambiguous.add((fmt_time(t), dev, F.id))
                        # emit anyway; compare ignores it
                    emit(t, dev, F, 'cross', lon, lat)
            for fid in sorted(visits, key=lambda s: s.encode()):
                if fid not in cov:
                    v = visits.pop(fid)
                    emit(t, dev, v[0], 'exit', lon, lat, inside_s=(t - v[1]) / 1000)
            for fid in sorted(cov, key=lambda s: s.encode()):
                F = cov[fid]
                if fid not in visits:
                    visits[fid] = [F, t, False]
                    if k == 0:
                        if initial: emit(t, dev, F, 'enter', lon, lat, initial=True)
                    else:
                        emit(t, dev, F, 'enter', lon, lat)
                # Also on the entering fix: with dwell 0 it is the first fix at or after
                # enter + dwell (SPEC), so dwell follows its enter.
                v = visits[fid]
                dw = F.dwell_ms if F.dwell_ms is not None else dwell_default_ms
                if not v[2] and t >= v[1] + dw:
                    v[2] = True
                    emit(t, dev, F, 'dwell', lon, lat, inside_s=(t - v[1]) / 1000)
            last = fx; k += 1
        if idle_ms and clock_ms - last[2] >= idle_ms: evict(last[2] + idle_ms)
        expire_until(clock_ms)
    return emit.records(), dict(dups=dups, late=late, devices=len(bydev))

def _gss(f, a, b, it=80):
    g = (math.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(it):
        if fc < fd: b, d, fd = d, c, fc; c = b - g * (b - a); fc = f(c)
        else: a, c, fc = c, d, fd; d = a + g * (b - a); fd = f(d)
    return min(fc, fd, f(a), f(b))

def segment_candidates(idx, p, q, t, cb):
    """the lon/lat segment p->q, and the fences near it not expired at t (nor at the clock cb).
    The segment goes the short way across the antimeridian (README: longitudes more than 180
    apart), as two pieces split at +-180 (session 39's audit: it went the long way round)."""
    from shapely.geometry import LineString, MultiLineString
    x1, y1, x2, y2 = p[3], p[4], q[3], q[4]
    d = x2 - x1
    if abs(d) > 180:
        s = 180.0 if d < 0 else -180.0          # the side p leaves by: p east (d < 0) -> +180
        x2u = x2 + (360 if d < 0 else -360)
        yc = y1 + (s - x1) / (x2u - x1) * (y2 - y1)
        seg = MultiLineString([[(x1, y1), (s, yc)], [(-s, yc), (x2, y2)]])
    else:
        seg = LineString([(x1, y1), (x2, y2)])
    fs = [idx.f[i] for i in idx.tree.query(seg)]
    return seg, [F for F in fs if not (F.exp_ms is not None and (t >= F.exp_ms or (cb is not None and cb >= F.exp_ms)))]

def crossed(idx, p, q, t, cb):
    """fences whose area the lon/lat segment p->q meets, with an ambiguity flag (within 0.5 m)."""
    import shapely
    seg, fs = segment_candidates(idx, p, q, t, cb)
    out = []
    for F in fs:
        if F.kind == 'circle':
            f = lambda s: G.Inverse(F.lat, F.lon, p[4] + s * (q[4] - p[4]), p[3] + s * (q[3] - p[3]))['s12']
            dmin = _gss(f, 0.0, 1.0)
            if dmin <= F.r: out.append((F, abs(dmin - F.r) < 0.5))
            if dmin > F.r and dmin - F.r < 0.5:
                out.append((F, True))
        else:
            c = F.sg.centroid
            kx = 111320 * math.cos(math.radians(c.y)); ky = 110574
            tr = lambda g: shapely.transform(g, lambda a: np.column_stack(((a[:, 0] - c.x) * kx, (a[:, 1] - c.y) * ky)))
            gm, sm = tr(F.sg), tr(seg)
            hit = seg.intersects(F.sg)
            lo, hi = sm.intersects(gm.buffer(-0.5)), sm.intersects(gm.buffer(0.5))
            if hit or hi:
                out.append((F, lo != hi) if hit else (F, True))
    return out

import numpy as np

def contains(fences, fixes):
    idx = Index(fences)
    out = []
    for fx in fixes:
        ids = sorted((F.id for F in idx.covering(fx[3], fx[4], fx[2])), key=lambda s: s.encode())
        out.append((fx[1], fx[2], ids))
    return out

if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--fences'); ap.add_argument('--positions')
    ap.add_argument('--actions', default='enter,exit,dwell'); ap.add_argument('--dwell', type=float, default=600)
    ap.add_argument('--no-initial', action='store_true'); ap.add_argument('--batch', type=int); ap.add_argument('--evict-idle', type=float, default=0); ap.add_argument('--cross', action='store_true'); ap.add_argument('--amb-out'); ap.add_argument('--contains', action='store_true')
    a = ap.parse_args()
    fences = load_fences(a.fences)
    good, bad = parse_positions(a.positions)
    print('good', len(good), 'bad', bad, file=sys.stderr)
    if a.contains:
        for d, t, ids in contains(fences, good):
            print(json.dumps({'device': d, 'time': t, 'fences': ids}))
    else:
        amb = set()
        acts = set(a.actions.split(','))
        if a.cross: acts.add('cross')
        anyc = 'cross' in acts or any(F.actions and 'cross' in F.actions for F in fences)
        ev, st = evaluate(fences, good, acts, int(a.dwell * 1000), not a.no_initial, batch=a.batch, idle_ms=int(a.evict_idle * 1000), cross=anyc, ambiguous=amb)
        if a.amb_out: json.dump(sorted(amb), open(a.amb_out, 'w'))
        print(st, file=sys.stderr)
        for r in ev: print(json.dumps(r))
