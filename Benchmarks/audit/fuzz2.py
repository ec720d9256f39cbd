#!/usr/bin/env python3
"""Fuzz 2: cross (engine --cross / --actions with cross / fence actions with cross), idle, batches, out-of-order input."""
import sys, json, random, os, subprocess, shutil
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzz
from oracle import *
FENCE = fuzz.FENCE
def run(seed, ooo):
    feats, rows, o = fuzz.world(seed)
    rnd = random.Random(seed * 7 + 1)
    if not feats or not rows: return None
    for f in feats:
        if rnd.random() < 0.3: f['properties']['actions'] = rnd.choice(['cross', 'enter,cross', 'exit,dwell'])
    d = os.path.join(os.environ.get('AUDIT_OUT', 'audit-out'), 'fuzz', 'x%d' % seed); os.makedirs(d, exist_ok=True)
    json.dump({'type': 'FeatureCollection', 'features': feats}, open(d + '/fences.geojson', 'w'))
    fences = load_fences(d + '/fences.geojson')
    lines = ['%s,%d,%r,%r,%r' % (r[0], r[1], r[2], r[3], r[4]) for r in rows]
    if ooo:
        for _ in range(max(1, len(lines) // 15)):
            i = rnd.randrange(len(lines)); l = lines.pop(i); lines.insert(min(len(lines), i + rnd.randint(1, 6)), l)
    open(d + '/pos.csv', 'w').write('device,time,lon,lat,accuracy\n' + '\n'.join(lines) + '\n')
    good, _ = parse_positions(d + '/pos.csv')
    mode = rnd.choice(['cross', 'actions', 'fence'])
    acts = {'enter', 'exit', 'dwell'}
    args = ['--dwell', str(o['dwell'])]
    if mode == 'cross': args += ['--cross']; acts.add('cross')
    elif mode == 'actions':
        acts = set(rnd.choice([['enter', 'cross'], ['cross'], ['exit', 'dwell', 'cross']])); args += ['--actions', ','.join(sorted(acts))]
    if o['idle'] and (not ooo or os.environ.get('ALLOWIDLE')): args += ['--evict-idle', str(o['idle'])]
    if o['batch']: args += ['--batch', str(o['batch'])]
    if o['noinit']: args += ['--no-initial']
    anyc = 'cross' in acts or any(F.actions and 'cross' in F.actions for F in fences)
    amb = set()
    orc, _ = evaluate(fences, good, acts, o['dwell'] * 1000, not o['noinit'], batch=o['batch'], idle_ms=(o['idle'] * 1000 if o['idle'] and (not ooo or os.environ.get('ALLOWIDLE')) else 0), cross=anyc, ambiguous=amb)
    p = subprocess.run([FENCE, 'eval', '--fences', d + '/fences.geojson', '--positions', d + '/pos.csv'] + args, capture_output=True, text=True)
    eng = [json.loads(l) for l in p.stdout.splitlines()]
    key = lambda r: (r['time'], r['device'], r['fence'])
    keep = lambda r: not (r['event'] == 'cross' and key(r) in amb)
    norm = lambda r: json.dumps({k: (round(float(v), 3) if isinstance(v, (int, float)) and not isinstance(v, bool) else v) for k, v in r.items() if v is not None}, sort_keys=True)
    E = [norm(r) for r in eng if keep(r)]; O = [norm(r) for r in orc if keep(r)]
    same = (E == O) if not (ooo and o['batch']) else (sorted(E) == sorted(O))
    if not same:
        open(d + '/cmd.txt', 'w').write(' '.join([FENCE, 'eval', '--fences', 'fences.geojson', '--positions', 'pos.csv'] + args) + '\n')
        open(d + '/engine.ndjson', 'w').write(p.stdout); open(d + '/oracle.ndjson', 'w').write(''.join(json.dumps(r) + '\n' for r in orc))
    else: shutil.rmtree(d)
    return same, len(eng), sum(1 for r in eng if r['event'] == 'cross'), args
if __name__ == '__main__':
    a, b = int(sys.argv[1]), int(sys.argv[2]); ooo = len(sys.argv) > 3
    tot = bad = ev = cr = 0
    for s in range(a, b):
        r = run(s, ooo)
        if r is None: continue
        tot += 1; ev += r[1]; cr += r[2]
        if not r[0]: bad += 1; print('MISMATCH', s, r[1:], flush=True)
    print('scenarios', tot, 'mismatches', bad, 'events', ev, 'cross', cr)
