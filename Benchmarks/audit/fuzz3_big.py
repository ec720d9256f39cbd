#!/usr/bin/env python3
"""Determinism on a large world (session 40's audit): gen.py's fences and fleet (DIR holds
fences.geojson and pos.csv), its lines put in time order (stable; bad lines kept where they
fall), run through `fence eval` with --threads 1, 2, 3, several --batch sizes and --max-matches
pieces, under several engine settings; then cut into 2-4 files chained with --state. Every
run must give the base run's bytes (chains: apart from a millisecond a cut falls inside).

Usage: fuzz3_big.py DIR [SEED]"""
import sys, os, json, random, subprocess
from decimal import Decimal
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzz3

D = sys.argv[1]; seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
rnd = random.Random(seed)
FENCE = fuzz3.FENCE
lines = open(D + '/pos.csv').read().splitlines()
head, body = lines[0], lines[1:]
def key(l):
    try: return Decimal(l.split(',')[1])
    except Exception: return None
# stable time order; a bad line keeps the time of the line before it
keyed = []; last = Decimal(0)
for i, l in enumerate(body):
    k = key(l)
    if k is None: k = last
    last = k; keyed.append((k, i, l))
keyed.sort()
sbody = [l for _, _, l in keyed]
ppath = D + '/pos_sorted.csv'
open(ppath, 'w').write('\n'.join([head] + sbody) + '\n')
SETTINGS = [[], ['--evict-idle', '300'], ['--margin', '10', '--exit-delay', '30'], ['--cross'],
            ['--dwell', '0', '--no-initial', '--evict-idle', '120'], ['--actions', 'enter,exit,cross', '--margin', '3']]
total = bad = 0
for st in SETTINGS:
    base_cmd = [FENCE, 'eval', '--fences', D + '/fences.geojson', '--positions', ppath, '--max-bad', '1'] + st
    p = subprocess.run(['nice', '-n', '19'] + base_cmd + ['--threads', '1'], capture_output=True)
    base = p.stdout
    nev = base.count(b'\n')
    variants = [['--threads', '2'], ['--threads', '3']]
    for b in rnd.sample([1000, 4096, 77, 10000, 50000, 333], 3):
        variants.append(['--threads', str(rnd.choice([1, 2, 3])), '--batch', str(b)])
    variants.append(['--threads', '2', '--max-matches', str(rnd.choice([100, 1000, 5000]))])
    variants.append(['--threads', '3', '--max-matches', '500', '--batch', '20000'])
    for v in variants:
        q = subprocess.run(['nice', '-n', '19'] + base_cmd + v, capture_output=True)
        total += 1
        if q.stdout != base:
            bad += 1
            out = D + '/diff_%d.ndjson' % total
            open(out, 'wb').write(q.stdout)
            print('DIFF', st, v, 'base events', nev, 'variant', q.stdout.count(b'\n'), '->', out, flush=True)
    # chained
    k = rnd.randint(2, 4)
    cuts = sorted(rnd.sample(range(1, len(sbody)), k - 1))
    parts = [sbody[a:b] for a, b in zip([0] + cuts, cuts + [len(sbody)])]
    state = D + '/state.bin'
    if os.path.exists(state): os.remove(state)
    chained = b''
    for j, part in enumerate(parts):
        pp = D + '/part%d.csv' % j
        open(pp, 'w').write('\n'.join([head] + part) + '\n')
        q = subprocess.run(['nice', '-n', '19', FENCE, 'eval', '--fences', D + '/fences.geojson', '--positions', pp, '--max-bad', '1', '--state', state, '--threads', '2'] + st, capture_output=True)
        if q.returncode: print('chain part status', q.returncode, q.stderr[-300:])
        chained += q.stdout
    cut_ms = set()
    from oracle import fmt_time
    for c in cuts:
        for l in sbody[max(0, c - 3):c + 3]:
            k_ = key(l)
            if k_ is not None: cut_ms.add(fmt_time(int(k_ * 1000)))
    total += 1
    if not fuzz3.cmp_chain(base.decode(), chained.decode(), cut_ms):
        bad += 1
        open(D + '/chained_%d.ndjson' % total, 'wb').write(chained)
        print('CHAIN DIFF', st, 'cuts', cuts, 'base', nev, 'chained', chained.count(b'\n'), flush=True)
    print('setting', st, 'events', nev, flush=True)
print('variants', total, 'differences', bad)
