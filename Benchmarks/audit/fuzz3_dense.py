#!/usr/bin/env python3
"""Tiny worlds dense in coincidences (session 40's audit): 2-5 devices on a 1-second grid over
a minute, fence expiries, idle times, exit delays and dwells that are whole seconds (so they
fall on fix times and batch ends), duplicates. Every --batch size from 1 to the line count,
threads 1-3, --max-matches 1, and chains cut at every line, must give the one-batch bytes
(chains: apart from the millisecond a cut falls inside); the one-batch run is checked against
the oracle.

Usage: fuzz3_dense.py A B"""
import sys, os, json, random, math, subprocess, shutil
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzz3, oracle, oracle_h
from oracle import fmt_time, ALL
FENCE = fuzz3.FENCE
T0 = 1700000000

def world(seed):
    rnd = random.Random(seed)
    lon0, lat0 = 13.4, 52.5; KX = 111320 * math.cos(math.radians(lat0)); KY = 110540
    ll = lambda x, y: (round(lon0 + x / KX, 7), round(lat0 + y / KY, 7))
    feats = []
    for i in range(rnd.randint(1, 3)):
        p = {'radius': rnd.choice([100, 200, 300])}
        if rnd.random() < 0.6: p['expires'] = T0 + rnd.randint(1, 40)
        if rnd.random() < 0.3: p['dwell'] = rnd.choice([0, 3, 5])
        feats.append({'type': 'Feature', 'id': 'f%d' % i, 'properties': p,
                      'geometry': {'type': 'Point', 'coordinates': list(ll(rnd.uniform(-150, 150), rnd.uniform(-150, 150)))}})
    rows = []
    for d in range(rnd.randint(2, 5)):
        t = T0 + rnd.randint(0, 5)
        for k in range(rnd.randint(2, 8)):
            x, y = rnd.choice([(rnd.uniform(-100, 100), rnd.uniform(-100, 100)), (rnd.uniform(-600, 600), rnd.uniform(-600, 600))])
            rows.append(('d%d' % d, t, ll(x, y)))
            if rnd.random() < 0.1: rows.append(('d%d' % d, t, ll(x + 300, y)))
            t += rnd.choice([1, 1, 2, 3, 5, 10])
    rows.sort(key=lambda r: (r[1], rnd.random()))
    o = dict(margin=0, delay=rnd.choice([0, 0, 2, 5]), idle=rnd.choice([0, 0, 3, 5, 10]), dwell=rnd.choice([600, 2, 4, 0]), noinit=False, actions=None, cross=False)
    return feats, rows, o

def check(seed):
    feats, rows, o = world(seed)
    d = os.path.join(fuzz3.OUT, 'dense%d' % seed); shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
    fp = d + '/fences.geojson'; json.dump({'type': 'FeatureCollection', 'features': feats}, open(fp, 'w'))
    fences = oracle.load_fences(fp); idx = oracle.Index(fences)
    lines = ['device,time,lon,lat']; fixes = []
    for dev, t, (lo, la) in rows:
        fx = (len(lines) + 1, dev, t * 1000, lo, la, None)
        if oracle_h.ambiguous(idx, fx, 0, 0.5): continue
        lines.append('%s,%d,%r,%r' % (dev, t, lo, la)); fixes.append(fx)
    if not fixes: shutil.rmtree(d); return None
    pp = d + '/pos.csv'; open(pp, 'w').write('\n'.join(lines) + '\n')
    ea = fuzz3.engine_args(o)
    cmd = [FENCE, 'eval', '--fences', fp, '--positions', pp] + ea
    base = subprocess.run(cmd, capture_output=True).stdout.decode()
    fails = []
    orc = oracle_h.evaluate_h(fences, fixes, 0, o['delay'] * 1000, ALL, o['dwell'] * 1000, True, None, o['idle'] * 1000)
    if not fuzz3.cmp_oracle([json.loads(l) for l in base.splitlines()], orc, set()):
        fails.append('oracle'); open(d + '/oracle.ndjson', 'w').write(''.join(json.dumps(r) + '\n' for r in orc))
    n = len(fixes)
    for b in range(1, n + 1):
        out = subprocess.run(cmd + ['--batch', str(b), '--threads', str(1 + b % 3)], capture_output=True).stdout.decode()
        if out != base: fails.append('batch %d' % b); open(d + '/batch%d.ndjson' % b, 'w').write(out)
    out = subprocess.run(cmd + ['--max-matches', '1', '--threads', '2'], capture_output=True).stdout.decode()
    if out != base: fails.append('max-matches 1'); open(d + '/mm1.ndjson', 'w').write(out)
    body = lines[1:]
    for c in range(1, len(body)):
        st = d + '/state%d.bin' % c
        o1 = subprocess.run([FENCE, 'eval', '--fences', fp, '--positions', '-', '--state', st] + ea, input=('\n'.join([lines[0]] + body[:c]) + '\n').encode(), capture_output=True).stdout.decode()
        o2 = subprocess.run([FENCE, 'eval', '--fences', fp, '--positions', '-', '--state', st] + ea, input=('\n'.join([lines[0]] + body[c:]) + '\n').encode(), capture_output=True).stdout.decode()
        cut_ms = {fmt_time(int(l.split(',')[1]) * 1000) for l in body[max(0, c - 1):c + 1]}
        if not fuzz3.cmp_chain(base, o1 + o2, cut_ms):
            fails.append('chain at %d' % c); open(d + '/chain%d.ndjson' % c, 'w').write(o1 + '----\n' + o2)
        os.remove(st)
    open(d + '/base.ndjson', 'w').write(base); open(d + '/cmd.txt', 'w').write(' '.join(cmd) + '\n')
    if not fails: shutil.rmtree(d)
    return fails, base.count('\n')

if __name__ == '__main__':
    a, b = int(sys.argv[1]), int(sys.argv[2])
    tot = bad = ev = 0
    for s in range(a, b):
        r = check(s)
        if r is None: continue
        tot += 1; ev += r[1]
        if r[0]: bad += 1; print('MISMATCH', s, r[0][:6], flush=True)
    print('worlds', tot, 'with differences', bad, 'events', ev)
