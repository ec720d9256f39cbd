#!/usr/bin/env python3
"""compare engine NDJSON events with oracle NDJSON events, event by event and in order."""
import json, sys
def load(p):
    return [json.loads(l) for l in open(p) if l.strip()]
FIELDS = ['time', 'device', 'fence', 'group', 'event', 'lon', 'lat', 'initial', 'reason', 'inside_s']
def norm(r):
    out = []
    for f in FIELDS:
        v = r.get(f)
        if f in ('lon', 'lat') and v is not None: v = round(float(v), 9)
        if f == 'inside_s' and v is not None: v = round(float(v), 3)
        if f == 'initial' and v is False: v = None
        out.append(v)
    return tuple(out)
import os
amb = set(tuple(x) for x in json.load(open(os.environ['AMB']))) if os.environ.get('AMB') else set()
keep = lambda r: (r.get('time'), r.get('device'), r.get('fence')) not in amb or r.get('event') != 'cross'
eng = [norm(r) for r in load(sys.argv[1]) if keep(r)]
orc = [norm(r) for r in load(sys.argv[2]) if keep(r)]
print('ignored ambiguous cross keys', len(amb))
limit = int(sys.argv[3]) if len(sys.argv) > 3 else 15
se, so = set(eng), set(orc)
only_e = [e for e in eng if e not in so]
only_o = [e for e in orc if e not in se]
print('engine', len(eng), 'oracle', len(orc), 'only-engine', len(only_e), 'only-oracle', len(only_o))
for e in only_e[:limit]: print('  E', e)
for e in only_o[:limit]: print('  O', e)
if not only_e and not only_o:
    print('same multiset;', 'same order' if eng == orc else 'ORDER DIFFERS')
    if eng != orc:
        for i, (a, b) in enumerate(zip(eng, orc)):
            if a != b: print('  first order diff at', i, a, b); break
# check engine order against (time, device bytes, fence bytes)
key = lambda r: (r[0], r[1].encode(), r[2].encode())
bad = sum(1 for a, b in zip(eng, eng[1:]) if key(a) > key(b))
print('engine order violations of (time,device,fence):', bad)
