#!/usr/bin/env python3
"""Fuzz 3 (session 40's audit): what fuzz.py / fuzz2.py do not check, over small random worlds.

Each world (fences: circles, Polygons, MultiPolygons with holes, groups, actions, dwell,
expiry inside the data; a fleet in time order with ties across devices, fractional
milliseconds, duplicate fixes, a few malformed lines; CSV or NDJSON) is checked for:

  oracle   `fence eval` (one thread, one batch) against oracle_h (margin, exit delay, idle
           eviction, masks) or oracle (cross), event by event and in order;
  threads  the same run on --threads 1, 2, 3: the same bytes (SPEC: output never depends on
           the thread count);
  batch    --batch sizes (and --max-matches pieces) on this in-order input: the same bytes;
  chain    the input cut at random lines into 2-4 files run one after another with --state:
           the same events (README "State": the same bytes, except that a cut inside one
           millisecond may reorder that millisecond's events: compared as a multiset there);
  contains `fence contains --format ndjson` on --threads 1 and 3 against the oracle's
           containment (and each other);
  coord    (CHINA=1 or the `china` argument) the world is placed inside China and fences
           and positions are written in wgs84 / gcj02 / bd09ll (fence `coord` / `coordType`,
           positions by --coord, a coord column, or both); the oracle runs in WGS84 from
           coordconv.py's own inverse, fixes kept 3 m from every boundary and margin band,
           event positions compared within 2e-8 degrees.

Usage: fuzz3.py A B [china]   (seeds A..B-1); FENCE and AUDIT_OUT as for fuzz.py.
A failing world is kept under AUDIT_OUT/fuzz3/<seed> with every command in cmds.txt."""
import sys, os, json, random, math, subprocess, shutil
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle, oracle_h, coordconv
from oracle import fmt_time, ALL
from shapely.geometry import Polygon, MultiPolygon

FENCE = os.environ.get('FENCE', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '.build', 'release', 'fence'))
OUT = os.path.join(os.environ.get('AUDIT_OUT', 'audit-out'), 'fuzz3')
T0 = 1700000000
SYSTEMS = ['wgs84', 'gcj02', 'bd09ll']
SPELL = {'wgs84': ['wgs84', 'WGS84'], 'gcj02': ['gcj02', 'GCJ-02', 'gcj_02'], 'bd09ll': ['bd09ll', 'BD09', 'bd-09ll']}


class World:
    pass


def make_world(seed, china):
    rnd = random.Random(seed)
    W = World(); W.seed = seed; W.china = china
    if china:
        lon0, lat0 = rnd.uniform(100, 125), rnd.uniform(22, 45)
    else:
        lon0, lat0 = 13.4, 52.5
    KX = 111320 * math.cos(math.radians(lat0)); KY = 110540
    ll = lambda x, y: (round(lon0 + x / KX, 7), round(lat0 + y / KY, 7))
    spread = rnd.choice([400, 800, 1500])
    W.span = rnd.choice([600, 1800, 3600])
    feats = []          # as the engine reads them
    wgs_feats = []      # the same fences in WGS84, for the oracle
    for i in range(rnd.randint(1, 8)):
        cx, cy = rnd.uniform(-spread, spread), rnd.uniform(-spread, spread)
        p = {}
        if rnd.random() < 0.3: p['group'] = rnd.choice(['g1', 'g2', 'g,3'])
        if rnd.random() < 0.25: p['actions'] = rnd.choice(['enter', 'exit', 'dwell', 'enter,exit', 'exit,dwell'])
        if rnd.random() < 0.35: p['dwell'] = rnd.choice([0, 10, 30, 60, 120])
        if rnd.random() < 0.3: p['expires'] = T0 + rnd.randint(30, W.span) + rnd.choice([0, 0, 0.5, 0.25])
        kind = rnd.random()
        if kind < 0.45:
            p['radius'] = round(rnd.uniform(40, 500), 1)
            g = {'type': 'Point', 'coordinates': list(ll(cx, cy))}
        elif kind < 0.85:
            n = rnd.randint(3, 12); R = rnd.uniform(100, 700)
            angs = sorted(rnd.uniform(0, 2 * math.pi) for _ in range(n))
            ring = [list(ll(cx + R * rnd.uniform(0.4, 1) * math.cos(a), cy + R * rnd.uniform(0.4, 1) * math.sin(a))) for a in angs]
            ring.append(ring[0])
            g = {'type': 'Polygon', 'coordinates': [ring]}
        else:
            R = rnd.uniform(200, 600); r = R * rnd.uniform(0.2, 0.6)
            sq = lambda h, ox=0, oy=0: [list(ll(cx + ox + a * h, cy + oy + b * h)) for a, b in [(-1, -1), (1, -1), (1, 1), (-1, 1), (-1, -1)]]
            hole = sq(r); hole.reverse()
            parts = [[sq(R), hole]]
            if rnd.random() < 0.6:
                parts.append([sq(R * 0.3, 2.2 * R, 0)])
            g = {'type': 'MultiPolygon', 'coordinates': parts}
        # coordinate system of the fence
        sysn = rnd.choice(SYSTEMS) if china else 'wgs84'
        wg = json.loads(json.dumps(g))
        if sysn != 'wgs84':
            fwd = coordconv.FORWARD[sysn]
            conv = lambda c: [round(v, 9) for v in fwd(c[0], c[1])]
            if g['type'] == 'Point': g['coordinates'] = conv(g['coordinates'])
            elif g['type'] == 'Polygon': g['coordinates'] = [[conv(c) for c in r_] for r_ in g['coordinates']]
            else: g['coordinates'] = [[[conv(c) for c in r_] for r_ in pp] for pp in g['coordinates']]
            back = lambda c: list(coordconv.to_wgs(sysn, c[0], c[1]))
            if g['type'] == 'Point': wg['coordinates'] = back(g['coordinates'])
            elif g['type'] == 'Polygon': wg['coordinates'] = [[back(c) for c in r_] for r_ in g['coordinates']]
            else: wg['coordinates'] = [[[back(c) for c in r_] for r_ in pp] for pp in g['coordinates']]
        if g['type'] != 'Point':
            from shapely.geometry import shape
            if not shape(wg).is_valid or not shape(g).is_valid: continue
        pe = dict(p)
        if china and (sysn != 'wgs84' or rnd.random() < 0.3):
            pe[rnd.choice(['coord', 'coord', 'coordType'])] = rnd.choice(SPELL[sysn])
        fid = rnd.choice(['f%d' % i, 'F%d' % i, 'f-%d' % i])
        feats.append({'type': 'Feature', 'id': fid, 'properties': pe, 'geometry': g})
        wgs_feats.append({'type': 'Feature', 'id': fid, 'properties': p, 'geometry': wg})
    W.feats, W.wgs_feats = feats, wgs_feats
    # the fleet, in WGS84
    ties = rnd.random() < 0.4
    frac = rnd.random() < 0.3
    sig = rnd.choice([20, 60, 120])
    rows = []   # [dev, t_ms, lon, lat, acc]
    for d in range(rnd.randint(1, 25)):
        x, y = rnd.uniform(-spread, spread), rnd.uniform(-spread, spread)
        t = T0 * 1000 + rnd.randint(0, 60) * 1000
        if ties: t -= t % 5000
        gap = rnd.choice([(1, 10), (5, 30), (10, 100)])
        dev = rnd.choice(['d%d' % d, 'D%d' % d, 'dev %d' % d])
        for k in range(rnd.randint(3, 80)):
            if rnd.random() < 0.7: x += rnd.gauss(0, sig); y += rnd.gauss(0, sig)
            if ties: t += 5000 * rnd.randint(1, 4)
            else: t += 1000 * rnd.randint(*gap) + (rnd.choice([0, 1, 250, 500, 999]) if frac else 0)
            if t > (T0 + W.span) * 1000: break
            lo, la = ll(x, y)
            rows.append([dev, t, lo, la, float(rnd.choice([1, 3, 8]))])
            if rnd.random() < 0.04:   # a duplicate fix: same device and time, maybe elsewhere
                lo2, la2 = (lo, la) if rnd.random() < 0.5 else ll(x + rnd.gauss(0, sig), y + rnd.gauss(0, sig))
                rows.append([dev, t, lo2, la2, 3.0])
    rows.sort(key=lambda r: (r[1], rnd.random()))
    # keep duplicates right after their first fix... sort is stable on t with random ties; fine
    W.opts = o = dict(margin=rnd.choice([0, 0, 5]), delay=rnd.choice([0, 0, 20, 60]), idle=rnd.choice([0, 0, 40, 90]),
                      dwell=rnd.choice([600, 60, 45, 0]), noinit=rnd.random() < 0.2,
                      actions=rnd.choice([None, None, None, 'enter,exit', 'exit,dwell', 'enter,dwell']))
    o['cross'] = (o['margin'] == 0 and o['delay'] == 0 and rnd.random() < 0.25)
    W.fmt = rnd.choice(['csv', 'csv', 'ndjson'])
    W.iso = rnd.random() < 0.2
    # positions' coordinate systems
    if china:
        mode = rnd.choice(['flag', 'column', 'both', 'none'])
        W.flag = rnd.choice(SYSTEMS) if mode in ('flag', 'both') else None
        W.column = mode in ('column', 'both')
    else:
        W.flag, W.column = None, False
    W.rnd = rnd
    W.rows = rows
    return W


def tstr(W, t_ms):
    if W.iso:
        return fmt_time(t_ms) if t_ms % 1000 else fmt_time(t_ms)[:-5] + 'Z'
    s, ms = divmod(t_ms, 1000)
    return '%d' % s if ms == 0 else '%d.%03d' % (s, ms)


BAD_CSV = ['{d},notatime,{lo},{la},3', '{d},{t},200.5,{la},3', '{d},{t},{lo},95,3', '{d},{t},nan,{la},3',
           ',{t},{lo},{la},3', '{d},{t},{lo}', 'garbage line', '{d},{t},{lo},{la},3,extra']
BAD_ND = ['{{"device":"{d}","time":"nope","lon":{lo},"lat":{la}}}', '{{"device":"{d}","time":{t},"lon":181,"lat":{la}}}',
          '{{"device":"{d}","time":{t},"lon":{lo}}}', 'not json', '{{"device":"","time":{t},"lon":{lo},"lat":{la}}}']


def render(W, idx_wgs, tol):
    """Writes the rows, with their coordinate systems, and malformed lines. Returns the lines
    (header first for CSV), the engine args for positions, and the oracle's fixes (WGS84)."""
    rnd = W.rnd
    lines = []; fixes = []
    cols = ['device', 'time', 'lon', 'lat', 'accuracy'] + (['coord'] if W.column else [])
    if W.fmt == 'csv': lines.append(','.join(cols))
    nbad = rnd.choice([0, 0, 1, 3, 6])
    badat = set(rnd.randrange(max(1, len(W.rows))) for _ in range(nbad))
    for i, (dev, t, lo, la, acc) in enumerate(W.rows):
        if i in badat:
            tpl = rnd.choice(BAD_CSV if W.fmt == 'csv' else BAD_ND)
            b = tpl.format(d=dev, t=tstr(W, t) if W.fmt == 'csv' else t / 1000, lo=lo, la=la)
            if W.fmt == 'csv' and W.column and not b.startswith('garbage'): b += ','
            lines.append(b)
        # the system this line is written in
        s = W.flag or 'wgs84'; cell = None
        if W.column:
            c = rnd.choice(SYSTEMS + [None])
            if c is not None: s = c; cell = rnd.choice(SPELL[c])
        wl = (lo, la)
        if s != 'wgs84':
            g = coordconv.FORWARD[s](lo, la)
            g = (round(g[0], 9), round(g[1], 9))
            wl = coordconv.to_wgs(s, *g)
            lo, la = g
        fx = (len(lines) + 1, dev, t, wl[0], wl[1], acc)
        if oracle_h.ambiguous(idx_wgs, fx, W.opts['margin'], tol): continue
        if W.fmt == 'csv':
            l = '%s,%s,%r,%r,%r' % (dev, tstr(W, t), lo, la, acc)
            if W.column: l += ',' + (cell or '')
        else:
            o = {'device': dev, 'time': tstr(W, t) if W.iso else t / 1000, 'lon': lo, 'lat': la, 'accuracy': acc}
            if W.column and cell: o['coord'] = cell
            l = json.dumps(o)
        lines.append(l); fixes.append(fx)
    # the format named: sniffing reads the first line, which may be a malformed one (a chain's
    # part too), and a bad first line of NDJSON is then taken for a CSV header (README)
    args = ['--input-format', W.fmt] + (['--coord', W.flag] if W.flag else [])
    return lines, args, fixes


def engine_args(o):
    a = ['--dwell', str(o['dwell'])]
    if o['margin']: a += ['--margin', str(o['margin'])]
    if o['delay']: a += ['--exit-delay', str(o['delay'])]
    if o['idle']: a += ['--evict-idle', str(o['idle'])]
    if o['noinit']: a += ['--no-initial']
    if o['actions']: a += ['--actions', o['actions'] + (',cross' if o['cross'] else '')]
    elif o['cross']: a += ['--cross']
    return a


def run(cmd, log):
    log.append(' '.join("'%s'" % c if (' ' in c or ',' in c) else c for c in cmd))
    p = subprocess.run(['nice', '-n', '19'] + cmd, capture_output=True)
    return p


def norm_events(out):
    return [json.loads(l) for l in out.splitlines() if l.strip()]


def same_event(e, o, tol=2e-8):
    ke = {k: v for k, v in e.items() if v is not None and v is not False}
    ko = {k: v for k, v in o.items() if v is not None and v is not False}
    if set(ke) != set(ko): return False
    for k in ke:
        a, b = ke[k], ko[k]
        if k in ('lon', 'lat'):
            if abs(float(a) - float(b)) > tol: return False
        elif k == 'inside_s':
            if abs(float(a) - float(b)) > 1e-3: return False
        elif a != b: return False
    return True


def cmp_oracle(eng, orc, amb):
    keep = lambda r: not (r['event'] == 'cross' and (r['time'], r['device'], r['fence']) in amb)
    E = [r for r in eng if keep(r)]; O = [r for r in orc if keep(r)]
    if len(E) != len(O): return False
    return all(same_event(a, b) for a, b in zip(E, O))


def cmp_chain(single, chained, cut_ms):
    """bytes equal, except the events of a millisecond a cut falls inside: a multiset there."""
    if single == chained: return True
    A = single.splitlines(); B = chained.splitlines()
    if sorted(A) != sorted(B): return False
    def groups(L):
        out = []
        for l in L:
            t = json.loads(l)['time']
            if out and out[-1][0] == t: out[-1][1].append(l)
            else: out.append((t, [l]))
        return out
    ga, gb = groups(A), groups(B)
    if [g[0] for g in ga] != [g[0] for g in gb]: return False
    for (t, a), (_, b) in zip(ga, gb):
        if a != b and not (t in cut_ms and sorted(a) == sorted(b)): return False
    return True


def check(seed, china=False, keep=False):
    W = make_world(seed, china)
    if not W.feats or not W.rows: return None
    d = os.path.join(OUT, '%s%d' % ('c' if china else 's', seed)); shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
    fpath = d + '/fences.geojson'; wpath = d + '/fences_wgs84.geojson'
    json.dump({'type': 'FeatureCollection', 'features': W.feats}, open(fpath, 'w'))
    json.dump({'type': 'FeatureCollection', 'features': W.wgs_feats}, open(wpath, 'w'))
    fences = oracle.load_fences(wpath); idx = oracle.Index(fences)
    tol = 3.0 if china else 0.5
    lines, pargs, fixes = render(W, idx, tol)
    if not fixes: shutil.rmtree(d); return None
    ext = '.csv' if W.fmt == 'csv' else '.ndjson'
    ppath = d + '/pos' + ext
    open(ppath, 'w').write('\n'.join(lines) + '\n')
    o = W.opts; ea = engine_args(o)
    log = []; fails = []; stats = dict(events=0, runs=0, contains=0)
    base_cmd = [FENCE, 'eval', '--fences', fpath, '--positions', ppath] + pargs + ea
    p1 = run(base_cmd + ['--threads', '1'], log)
    if p1.returncode != 0: fails.append('eval status %d: %s' % (p1.returncode, p1.stderr.decode()[-300:]))
    base = p1.stdout.decode(); stats['runs'] += 1
    eng = norm_events(base); stats['events'] += len(eng)
    # 1. oracle
    acts = set(o['actions'].split(',')) if o['actions'] else set(ALL)
    if o['cross']:
        acts.add('cross'); amb = set()
        anyc = True
        orc, _ = oracle.evaluate(fences, fixes, acts, o['dwell'] * 1000, not o['noinit'], idle_ms=o['idle'] * 1000, cross=True, ambiguous=amb)
    else:
        amb = set()
        orc = oracle_h.evaluate_h(fences, fixes, o['margin'], o['delay'] * 1000, acts, o['dwell'] * 1000, not o['noinit'], None, o['idle'] * 1000)
    if not cmp_oracle(eng, orc, amb):
        fails.append('oracle')
        open(d + '/oracle.ndjson', 'w').write(''.join(json.dumps(r) + '\n' for r in orc))
    # 2. threads
    for th in (2, 3):
        p = run(base_cmd + ['--threads', str(th)], log); stats['runs'] += 1
        if p.stdout.decode() != base: fails.append('threads %d' % th); open(d + '/threads%d.ndjson' % th, 'wb').write(p.stdout)
    # 3. batches and pieces
    rnd = random.Random(seed * 31 + 7)
    for b in sorted(set(rnd.sample([1, 2, 3, 5, 8, 13, 50, 200], 3))):
        th = rnd.choice([1, 2, 3])
        p = run(base_cmd + ['--threads', str(th), '--batch', str(b)], log); stats['runs'] += 1
        if p.stdout.decode() != base: fails.append('batch %d threads %d' % (b, th)); open(d + '/batch%d.ndjson' % b, 'wb').write(p.stdout)
    for m in (1, 7):
        th = rnd.choice([1, 2, 3])
        p = run(base_cmd + ['--threads', str(th), '--max-matches', str(m)], log); stats['runs'] += 1
        if p.stdout.decode() != base: fails.append('max-matches %d threads %d' % (m, th)); open(d + '/mm%d.ndjson' % m, 'wb').write(p.stdout)
    # 4. chained runs
    body = lines[1:] if W.fmt == 'csv' else lines
    head = [lines[0]] if W.fmt == 'csv' else []
    good_idx = [i for i, l in enumerate(body) if True]
    k = rnd.randint(2, 4)
    cuts = sorted(rnd.sample(range(1, len(body)), min(k - 1, len(body) - 1))) if len(body) > 1 else []
    parts = [body[a:b] for a, b in zip([0] + cuts, cuts + [len(body)])]
    state = d + '/state.bin'
    if os.path.exists(state): os.remove(state)
    chained = ''; cut_ms = set(); ok = True
    # the millisecond of the fixes either side of each cut (a cut inside one: README "State")
    def line_time(l):
        try:
            if W.fmt == 'csv': return fmt_time(oracle.parse_time_ms(l.split(',')[1]))
            v = json.loads(l)['time']; return fmt_time(oracle.parse_time_ms(v))
        except Exception: return None
    for c in cuts:
        for l in body[max(0, c - 3):c + 3]:
            tt = line_time(l)
            if tt: cut_ms.add(tt)
    for j, part in enumerate(parts):
        pp = d + '/part%d%s' % (j, ext)
        open(pp, 'w').write('\n'.join(head + part) + '\n')
        p = run([FENCE, 'eval', '--fences', fpath, '--positions', pp, '--state', state, '--threads', str(rnd.choice([1, 2]))] + pargs + ea, log)
        stats['runs'] += 1
        if p.returncode != 0:
            # a part with no good line at all is refused (README): not a difference
            if b'none good' in p.stderr: ok = None; break
            fails.append('chain part %d status %d: %s' % (j, p.returncode, p.stderr.decode()[-300:])); ok = False; break
        chained += p.stdout.decode()
    if ok is not False and ok is not None:
        if not cmp_chain(base, chained, cut_ms):
            fails.append('chain'); open(d + '/chained.ndjson', 'w').write(chained)
    # 5. contains
    orc_c = oracle.contains(fences, fixes)
    cout = None
    for th in (1, 3):
        p = run([FENCE, 'contains', '--fences', fpath, '--positions', ppath, '--format', 'ndjson', '--threads', str(th)] + pargs, log)
        stats['runs'] += 1
        out = p.stdout.decode()
        if cout is None:
            cout = out
            eng_c = norm_events(out); stats['contains'] += len(eng_c)
            if len(eng_c) != len(orc_c) or any((dv, fmt_time(t), ids) != (e['device'], e['time'], e['fences']) for (dv, t, ids), e in zip(orc_c, eng_c)):
                fails.append('contains'); open(d + '/contains.ndjson', 'w').write(out)
                open(d + '/contains_oracle.ndjson', 'w').write(''.join(json.dumps({'device': dv, 'time': fmt_time(t), 'fences': ids}) + '\n' for dv, t, ids in orc_c))
        elif out != cout:
            fails.append('contains threads %d' % th)
    open(d + '/engine.ndjson', 'w').write(base)
    open(d + '/cmds.txt', 'w').write('\n'.join(log) + '\n')
    open(d + '/world.json', 'w').write(json.dumps(dict(opts=o, fmt=W.fmt, iso=W.iso, flag=W.flag, column=W.column, cuts=cuts)) + '\n')
    if not fails and not keep: shutil.rmtree(d)
    return fails, stats


if __name__ == '__main__':
    a, b = int(sys.argv[1]), int(sys.argv[2]); china = 'china' in sys.argv[3:] or os.environ.get('CHINA') == '1'
    tot = bad = 0; agg = dict(events=0, runs=0, contains=0); kinds = {}
    for s in range(a, b):
        r = check(s, china)
        if r is None: continue
        tot += 1
        for k in agg: agg[k] += r[1][k]
        if r[0]:
            bad += 1; print('MISMATCH', s, r[0], flush=True)
            for f in r[0]: kinds[f.split(':')[0]] = kinds.get(f.split(':')[0], 0) + 1
    print('worlds', tot, 'with differences', bad, kinds, 'engine events (base run)', agg['events'], 'engine runs', agg['runs'], 'contains lines', agg['contains'])
