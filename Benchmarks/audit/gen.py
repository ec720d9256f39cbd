#!/usr/bin/env python3
"""Seeded generator: fences (GeoJSON) + fleet telemetry (CSV epoch, CSV ISO, NDJSON)."""
import json, math, os, random, sys, datetime as dt
from shapely.geometry import Polygon, MultiPolygon, Point
from shapely.strtree import STRtree
from shapely import ops
from geographiclib.geodesic import Geodesic
G = Geodesic.WGS84

SEED = int(sys.argv[1]) if len(sys.argv) > 1 else 37
OUT = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.environ.get('AUDIT_OUT', 'audit-out'), 'data')
os.makedirs(OUT, exist_ok=True)
NF = int(sys.argv[3]) if len(sys.argv) > 3 else 320
ND = int(sys.argv[4]) if len(sys.argv) > 4 else 150
HOURS = float(sys.argv[5]) if len(sys.argv) > 5 else 4.0
rnd = random.Random(SEED)
import os
LON0, LAT0 = float(os.environ.get("LON0", 13.40)), float(os.environ.get("LAT0", 52.50))
KX = 111320 * math.cos(math.radians(LAT0)); KY = 110540
def to_ll(x, y): return (LON0 + x / KX, LAT0 + y / KY)
def to_xy(lon, lat): return ((lon - LON0) * KX, (lat - LAT0) * KY)
HALF = 25000  # metres: 50 km square
T0 = 1700000000
T1 = T0 + int(HOURS * 3600)

def star(cx, cy, rmin, rmax, n):
    angs = sorted(rnd.uniform(0, 2 * math.pi) for _ in range(n))
    pts = [(cx + r * math.cos(a), cy + r * math.sin(a)) for a in angs for r in [rnd.uniform(rmin, rmax)]]
    return pts

fences = []   # dicts: id, kind, geom_ll (shapely) or (lon,lat,r), props
feats = []
groups = ['G%d' % i for i in range(1, 9)] + ['depot', 'Zone é', 'yard,1']
def settings(props, i):
    r = rnd.random()
    if r < 0.45: props['group'] = rnd.choice(groups)
    elif r < 0.5: props['customID'] = rnd.choice(groups)
    if rnd.random() < 0.15:
        props['actions'] = rnd.choice(['enter,exit', 'exit', 'dwell', ['enter', 'dwell'], 'enter', 'exit,dwell', ['exit']])
    if rnd.random() < 0.2:
        props['dwell'] = rnd.choice([60, 120, 300, 450, 900, 1200, 90.5])
    if rnd.random() < 0.1:
        e = T0 + rnd.uniform(0.3, 0.95) * (T1 - T0)
        e = round(e) + 0.5   # half seconds: never equal to a fix time at whole ms? (fix times are ms; avoid below)
        if rnd.random() < 0.5:
            props['expires'] = e
        else:
            props['expires'] = dt.datetime.fromtimestamp(e, dt.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3] + 'Z'
        props['_exp'] = e
    props['name'] = 'fence %d' % i
    return props

ids = set()
for i in range(NF):
    cx, cy = rnd.uniform(-HALF, HALF), rnd.uniform(-HALF, HALF)
    kind = rnd.choices(['circle', 'poly', 'multi'], [0.4, 0.45, 0.15])[0]
    fid = '%s%03d' % (kind[0], i)
    props = settings({}, i)
    exp = props.pop('_exp', None)
    if kind == 'circle':
        r = rnd.choice([rnd.uniform(30, 200), rnd.uniform(200, 1500), rnd.uniform(1500, 4000)])
        r = round(r, 1)
        lon, lat = to_ll(cx, cy)
        lon, lat = round(lon, 7), round(lat, 7)
        props['radius'] = r
        geom = {'type': 'Point', 'coordinates': [lon, lat]}
        fences.append(dict(id=fid, kind='circle', c=(lon, lat), r=r, props=props, exp=exp, xy=(cx, cy)))
    else:
        parts = []
        nparts = 1 if kind == 'poly' else rnd.randint(2, 3)
        size = rnd.choice([rnd.uniform(80, 400), rnd.uniform(400, 2000), rnd.uniform(2000, 5000)])
        for p in range(nparts):
            px, py = cx + p * 2.6 * size, cy + rnd.uniform(-0.3, 0.3) * size
            concave = rnd.random() < 0.5
            n = rnd.randint(5, 40) if concave else rnd.randint(4, 12)
            rmin = size * (0.35 if concave else 0.85)
            shell = star(px, py, rmin, size, n)
            holes = []
            if rnd.random() < 0.3:
                holes.append(star(px + rnd.uniform(-0.1, 0.1) * rmin, py, 0.15 * rmin, 0.5 * rmin, rnd.randint(3, 8)))
            if rnd.random() < 0.25 and len(shell) >= 3:  # ccw shell, cw holes sometimes, sometimes not
                shell = shell[::-1]
            parts.append((shell, holes))
        def ring_ll(r):
            pts = [tuple(round(v, 7) for v in to_ll(x, y)) for x, y in r]
            return [list(p) for p in pts] + [list(pts[0])]
        llparts = [[ring_ll(s)] + [ring_ll(h) for h in hs] for s, hs in parts]
        if kind == 'poly':
            geom = {'type': 'Polygon', 'coordinates': llparts[0]}
            sg = Polygon(llparts[0][0], llparts[0][1:])
        else:
            geom = {'type': 'MultiPolygon', 'coordinates': llparts}
            sg = MultiPolygon([Polygon(p[0], p[1:]) for p in llparts])
        if not sg.is_valid:
            continue
        fences.append(dict(id=fid, kind='poly', g=sg, props=props, exp=exp, xy=(cx, cy)))
    feats.append({'type': 'Feature', 'id': fid, 'properties': props, 'geometry': geom})

json.dump({'type': 'FeatureCollection', 'features': feats}, open(OUT + '/fences.geojson', 'w'))

# --- boundary-distance helper in local metres
poly_xy = []
for f in fences:
    if f['kind'] == 'poly':
        g = f['g']
        gx = ops.transform(lambda x, y, z=None: ((x - LON0) * KX, (y - LAT0) * KY), g)
        f['gxy'] = gx
        poly_xy.append(f)
tree = STRtree([f['gxy'].boundary for f in poly_xy])
circ = [f for f in fences if f['kind'] == 'circle']

def near_boundary(lon, lat, tol=1.0):
    x, y = to_xy(lon, lat)
    p = Point(x, y)
    for idx in tree.query(p.buffer(tol * 1.5)):
        if poly_xy[idx]['gxy'].boundary.distance(p) < tol: return True
    for f in circ:
        fx, fy = f['xy']
        d0 = math.hypot(x - fx, y - fy)
        if abs(d0 - f['r']) < f['r'] * 0.02 + 50:
            d = G.Inverse(f['c'][1], f['c'][0], lat, lon)['s12']
            if abs(d - f['r']) < tol: return True
    return False

def interior_target(f):
    if f['kind'] == 'circle':
        a = rnd.uniform(0, 2 * math.pi); r = rnd.uniform(0, 0.6) * f['r']
        return f['xy'][0] + r * math.cos(a), f['xy'][1] + r * math.sin(a)
    g = f['gxy']
    parts = list(g.geoms) if g.geom_type == 'MultiPolygon' else [g]
    pp = rnd.choice(parts)
    q = pp.representative_point()
    return q.x, q.y

# --- devices
rows = []  # (device, t_ms, lon, lat, acc)
for d in range(ND):
    dev = rnd.choice(['truck-%d' % d, 'v%03d' % d, 'BUS_%d' % d, str(366000000 + d * 17)])
    x, y = rnd.uniform(-HALF, HALF), rnd.uniform(-HALF, HALF)
    t = T0 * 1000 + rnd.randint(0, 1800 * 1000)
    base = rnd.uniform(5, 60)
    frac = rnd.random() < 0.3   # device with millisecond times
    speed = rnd.uniform(5, 30)
    def emit(x, y, t):
        lon, lat = to_ll(x, y)
        lon, lat = round(lon, 7), round(lat, 7)
        if abs(lon - LON0) * KX > HALF * 1.3 or abs(lat - LAT0) * KY > HALF * 1.3: return
        if near_boundary(lon, lat): return
        rows.append([dev, t, lon, lat, round(rnd.uniform(2, 25), 1)])
    def step(t):
        s = base * rnd.uniform(0.8, 1.2)
        return t + (int(s * 1000) if frac else int(round(s)) * 1000)
    while t < T1 * 1000:
        if rnd.random() < 0.65:
            f = rnd.choice(fences); tx, ty = interior_target(f); stop = rnd.random() < 0.55
        else:
            tx, ty = rnd.uniform(-HALF, HALF), rnd.uniform(-HALF, HALF); stop = False
        dist = math.hypot(tx - x, ty - y)
        if dist > 15000:  # shorter legs
            tx, ty = x + (tx - x) * 15000 / dist, y + (ty - y) * 15000 / dist; dist = 15000; stop = False
        v = speed * rnd.uniform(0.7, 1.3)
        while dist > 1 and t < T1 * 1000:
            t2 = step(t); adv = v * (t2 - t) / 1000
            if adv >= dist: x, y = tx, ty; dist = 0
            else:
                x += (tx - x) * adv / dist; y += (ty - y) * adv / dist; dist -= adv
            t = t2; emit(x, y, t)
        if stop:
            end = t + rnd.randint(60, 1800) * 1000
            jx, jy = x, y
            while t < end and t < T1 * 1000:
                t = step(t); emit(jx + rnd.gauss(0, 2), jy + rnd.gauss(0, 2), t)

# avoid fix times equal to an expiry (to the ms)
exps = {int(round(f['exp'] * 1000)) for f in fences if f['exp'] is not None}
rows = [r for r in rows if r[1] not in exps]
rows.sort(key=lambda r: (r[1], r[0]))
# perturbations: duplicates (same device+time, some with another position), out-of-order swaps
lines = [r[:] for r in rows]
n = len(lines)
dup_idx = rnd.sample(range(n), 40)
for k, i in enumerate(sorted(dup_idx, reverse=True)):
    r = lines[i][:]
    if k % 2 == 0:   # same device and time, a different position (first read must win)
        r[2] = round(r[2] + rnd.uniform(-0.002, 0.002), 7); r[3] = round(r[3] + rnd.uniform(-0.002, 0.002), 7)
        if near_boundary(r[2], r[3]): continue
    lines.insert(i + rnd.randint(1, 30), r)
# out of order within a device: move some fixes later in the file by a few lines (time order broken)
for i in rnd.sample(range(n - 200), 40):
    r = lines.pop(i)
    lines.insert(i + rnd.randint(5, 150), r)
bad = ['truck-x,notatime,13.4,52.5,5', 'truck-x,1700000100,13.4,95.5,5', 'truck-x,1700000100,NaN,52.5,5',
       'truck-x,1700000100,13.4,,5', 'garbage line without commas', 'truck-x,1700000100,200.1,52.5,5',
       ',1700000100,13.4,52.5,5', 'truck-x,1700000100,13.4', 'truck-x,1700000100,inf,52.5,3']
badpos = sorted(rnd.sample(range(len(lines)), len(bad)))
lines_out = []  # (kind, data)
bi = 0
for k, r in enumerate(lines):
    while bi < len(bad) and badpos[bi] == k:
        lines_out.append(('bad', bad[bi])); bi += 1
    lines_out.append(('fix', r))

def fmt_epoch(t):
    return '%d' % (t // 1000) if t % 1000 == 0 else '%d.%03d' % (t // 1000, t % 1000)
def fmt_iso(t, k):
    d = dt.datetime.fromtimestamp(t / 1000, dt.timezone.utc)
    ms = t % 1000
    style = k % 5
    if style == 0: return d.strftime('%Y-%m-%dT%H:%M:%S') + ('.%03dZ' % ms if ms else 'Z')
    if style == 1: return d.strftime('%Y-%m-%dT%H:%M:%S') + ('.%03d' % ms if ms else '')       # no zone: UTC
    if style == 2:
        d2 = d.astimezone(dt.timezone(dt.timedelta(hours=2)))
        return d2.strftime('%Y-%m-%dT%H:%M:%S') + ('.%03d' % ms if ms else '') + '+02:00'
    if style == 3: return d.strftime('%Y-%m-%d %H:%M:%S') + ('.%03d' % ms if ms else '') + ' UTC'
    return d.strftime('%Y%m%dT%H%M%S') + ('.%03d' % ms if ms else '') + 'Z'

with open(OUT + '/pos.csv', 'w') as fe, open(OUT + '/pos_iso.csv', 'w') as fi, open(OUT + '/pos.ndjson', 'w') as fn:
    fe.write('device,time,lon,lat,accuracy\n'); fi.write('device,time,lon,lat\n')
    for k, (kind, r) in enumerate(lines_out):
        if kind == 'bad':
            fe.write(r + '\n'); fi.write(r + '\n'); fn.write('{"device":"truck-x","time":"bad"}\n' if k % 2 else r + '\n')
            continue
        dev, t, lon, lat, acc = r
        fe.write('%s,%s,%r,%r,%r\n' % (dev, fmt_epoch(t), lon, lat, acc))
        fi.write('%s,%s,%r,%r\n' % (dev, fmt_iso(t, k), lon, lat))
        fn.write(json.dumps({'device': dev, 'time': t / 1000 if t % 1000 else t // 1000, 'lon': lon, 'lat': lat, 'accuracy': acc}) + '\n')
print('fences', len(feats), 'fixes', len(rows), 'lines', len(lines_out), 'devices', ND, file=sys.stderr)
