#!/usr/bin/env python3
"""Small random worlds: engine vs oracle_h (margin, exit delay, idle eviction, batches, masks, expiry)."""
import sys, json, random, math, subprocess, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle_h import *
FENCE = os.environ.get('FENCE', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '.build', 'release', 'fence'))
SIG = float(os.environ.get("SIG", 60)); SPREAD = float(os.environ.get("SPREAD", 800))
LON0, LAT0 = 13.4, 52.5; KX = 111320 * math.cos(math.radians(LAT0)); KY = 110540
def ll(x, y): return round(LON0 + x / KX, 7), round(LAT0 + y / KY, 7)
def world(seed):
    rnd = random.Random(seed)
    feats = []
    for i in range(rnd.randint(1, 6)):
        cx, cy = rnd.uniform(-SPREAD, SPREAD), rnd.uniform(-SPREAD, SPREAD)
        p = {}
        if rnd.random() < 0.3: p['group'] = rnd.choice(['g1', 'g2'])
        if rnd.random() < 0.3: p['actions'] = rnd.choice(['enter', 'exit', 'dwell', 'enter,exit', 'exit,dwell'])
        if rnd.random() < 0.4: p['dwell'] = rnd.choice([10, 30, 60, 120])
        if rnd.random() < 0.3: p['expires'] = 1700000000 + rnd.randint(50, 1500) + rnd.choice([0, 0.5])
        if rnd.random() < 0.5:
            p['radius'] = round(rnd.uniform(50, 500), 1)
            g = {'type': 'Point', 'coordinates': list(ll(cx, cy))}
        else:
            n = rnd.randint(3, 9); R = rnd.uniform(100, 600)
            angs = sorted(rnd.uniform(0, 2 * math.pi) for _ in range(n))
            ring = [list(ll(cx + R * rnd.uniform(0.4, 1) * math.cos(a), cy + R * rnd.uniform(0.4, 1) * math.sin(a))) for a in angs]
            ring.append(ring[0])
            g = {'type': 'Polygon', 'coordinates': [ring]}
            from shapely.geometry import Polygon
            if not Polygon(ring).is_valid: continue
        feats.append({'type': 'Feature', 'id': 'f%d' % i, 'properties': p, 'geometry': g})
    rows = []
    for d in range(rnd.randint(1, 4)):
        x, y = rnd.uniform(-SPREAD, SPREAD), rnd.uniform(-SPREAD, SPREAD); t = 1700000000 + rnd.randint(0, 60)
        gap = rnd.choice([(1, 10), (5, 30), (10, 100)])
        for k in range(rnd.randint(5, 120)):
            if rnd.random() < 0.7: x += rnd.gauss(0, SIG); y += rnd.gauss(0, SIG)
            t += rnd.randint(*gap)
            lo, la = ll(x, y)
            rows.append(['d%d' % d, t, lo, la, rnd.choice([1, 3, 8])])
    rows.sort(key=lambda r: (r[1], rnd.random()))
    opts = {'margin': rnd.choice([0, 0, 5]), 'delay': rnd.choice([0, 0, 20, 60]), 'idle': rnd.choice([0, 0, 40, 90]),
            'batch': rnd.choice([None, None, 1, 3, 17]), 'noinit': rnd.random() < 0.2, 'dwell': rnd.choice([600, 60, 45])}
    return feats, rows, opts

def run(seed, keep=False):
    feats, rows, o = world(seed)
    if not feats or not rows: return None
    d = os.path.join(os.environ.get('AUDIT_OUT', 'audit-out'), 'fuzz', 's%d' % seed); os.makedirs(d, exist_ok=True)
    json.dump({'type': 'FeatureCollection', 'features': feats}, open(d + '/fences.geojson', 'w'))
    fences = load_fences(d + '/fences.geojson'); idx = Index(fences)
    good = [(i + 2, r[0], r[1] * 1000, r[2], r[3], float(r[4])) for i, r in enumerate(rows)]
    good = [g for g in good if not ambiguous(idx, g, o['margin'], 0.5)]
    # avoid fix times equal to expiries? no: keep them (defined rule)
    if not good: return None
    with open(d + '/pos.csv', 'w') as f:
        f.write('device,time,lon,lat,accuracy\n')
        for g in good: f.write('%s,%d,%r,%r,%r\n' % (g[1], g[2] // 1000, g[3], g[4], g[5]))
    good, _ = parse_positions(d + '/pos.csv')
    args = ['--dwell', str(o['dwell'])]
    if o['margin']: args += ['--margin', str(o['margin'])]
    if o['delay']: args += ['--exit-delay', str(o['delay'])]
    if o['idle']: args += ['--evict-idle', str(o['idle'])]
    if o['batch']: args += ['--batch', str(o['batch'])]
    if o['noinit']: args += ['--no-initial']
    p = subprocess.run([FENCE, 'eval', '--fences', d + '/fences.geojson', '--positions', d + '/pos.csv'] + args, capture_output=True, text=True)
    eng = [json.loads(l) for l in p.stdout.splitlines()]
    orc = evaluate_h(fences, good, o['margin'], o['delay'] * 1000, ALL, o['dwell'] * 1000, not o['noinit'], o['batch'], o['idle'] * 1000)
    norm = lambda r: json.dumps({k: (round(float(v), 3) if isinstance(v, (int, float)) and not isinstance(v, bool) else v) for k, v in r.items() if v is not None}, sort_keys=True)
    same = [norm(r) for r in eng] == [norm(r) for r in orc]
    if not same or keep:
        open(d + '/cmd.txt', 'w').write(' '.join([FENCE, 'eval', '--fences', 'fences.geojson', '--positions', 'pos.csv'] + args) + '\n')
        open(d + '/engine.ndjson', 'w').write(p.stdout); open(d + '/oracle.ndjson', 'w').write(''.join(json.dumps(r) + '\n' for r in orc))
    else:
        import shutil; shutil.rmtree(d)
    return same, len(eng), len(orc), args

if __name__ == '__main__':
    a, b = int(sys.argv[1]), int(sys.argv[2])
    tot = bad = ev = 0
    for s in range(a, b):
        r = run(s)
        if r is None: continue
        tot += 1; ev += r[1]
        if not r[0]: bad += 1; print('MISMATCH seed', s, r[1:], flush=True)
    print('scenarios', tot, 'mismatches', bad, 'engine events', ev)
