#!/usr/bin/env python3
"""A live feed (session 40's audit): fuzz3's worlds piped into `fence eval --positions -
--max-wait W` in chunks with pauses longer than W, against the same input as a file. README:
"Input in time order gives the same events either way, except that two devices' fixes of one
millisecond that arrive more than S apart are written in arrival order": chunks are cut only
between lines of different times (where a cut falls inside a millisecond the comparison is
a multiset there). Also: the same input gzip-compressed, and --format csv against NDJSON.

Usage: fuzz3_pipe.py A B [china]"""
import sys, os, json, random, subprocess, time, gzip, shutil, csv, io
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzz3, oracle
from oracle import fmt_time

def tms(W, l):
    try:
        if W.fmt == 'csv': return fmt_time(oracle.parse_time_ms(l.split(',')[1]))
        return fmt_time(oracle.parse_time_ms(json.loads(l)['time']))
    except Exception: return None

def check(seed, china):
    W = fuzz3.make_world(seed, china)
    if not W.feats or not W.rows: return None
    d = os.path.join(fuzz3.OUT, 'p%s%d' % ('c' if china else 's', seed)); shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
    fpath = d + '/fences.geojson'; json.dump({'type': 'FeatureCollection', 'features': W.feats}, open(fpath, 'w'))
    wf = d + '/fences_wgs84.geojson'; json.dump({'type': 'FeatureCollection', 'features': W.wgs_feats}, open(wf, 'w'))
    idx = oracle.Index(oracle.load_fences(wf))
    lines, pargs, fixes = fuzz3.render(W, idx, 3.0 if china else 0.5)
    if not fixes: shutil.rmtree(d); return None
    ext = '.csv' if W.fmt == 'csv' else '.ndjson'
    ppath = d + '/pos' + ext; data = '\n'.join(lines) + '\n'; open(ppath, 'w').write(data)
    ea = fuzz3.engine_args(W.opts)
    cmd = [fuzz3.FENCE, 'eval', '--fences', fpath] + pargs + ea
    base = subprocess.run(['nice', '-n', '19'] + cmd + ['--positions', ppath], capture_output=True).stdout.decode()
    fails = []
    # gzip
    gz = ppath + '.gz'; open(gz, 'wb').write(gzip.compress(data.encode()))
    if subprocess.run(['nice', '-n', '19'] + cmd + ['--positions', gz], capture_output=True).stdout.decode() != base: fails.append('gzip')
    # csv output: the same events
    c = subprocess.run(['nice', '-n', '19'] + cmd + ['--positions', ppath, '--format', 'csv'], capture_output=True).stdout.decode()
    rows = list(csv.DictReader(io.StringIO(c)))
    ev = [json.loads(l) for l in base.splitlines()]
    if len(rows) != len(ev): fails.append('csv count')
    else:
        for r, e in zip(rows, ev):
            if (r['time'], r['device'], r['fence'], r['event'], r['group'] or None, r['reason'] or None) != (e['time'], e['device'], e['fence'], e['event'], e.get('group'), e.get('reason')) \
               or abs(float(r['lon']) - e['lon']) > 1e-12 or abs(float(r['lat']) - e['lat']) > 1e-12 \
               or (r['initial'] == 'true') != bool(e.get('initial')) or (r['inside_s'] != '' and abs(float(r['inside_s']) - e['inside_s']) > 1e-9):
                fails.append('csv row %r vs %r' % (r, e)); break
    # live pipe
    rnd = random.Random(seed * 13 + 5)
    head = [lines[0]] if W.fmt == 'csv' else []; body = lines[len(head):]
    ncut = rnd.randint(1, 3)
    cuts = sorted(rnd.sample(range(1, len(body)), min(ncut, len(body) - 1))) if len(body) > 1 else []
    cut_ms = set()
    for cu in cuts:
        for l in body[max(0, cu - 3):cu + 3]:
            t = tms(W, l)
            if t: cut_ms.add(t)
    chunks = [body[a:b] for a, b in zip([0] + cuts, cuts + [len(body)])]
    p = subprocess.Popen(['nice', '-n', '19'] + cmd + ['--positions', '-', '--max-wait', '0.1'], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for j, ch in enumerate(chunks):
        p.stdin.write(('\n'.join((head if j == 0 else []) + ch) + '\n').encode()); p.stdin.flush()
        time.sleep(0.4)
    p.stdin.close(); out = p.stdout.read().decode(); p.wait()
    if not fuzz3.cmp_chain(base, out, cut_ms):
        fails.append('pipe'); open(d + '/pipe.ndjson', 'w').write(out)
    open(d + '/base.ndjson', 'w').write(base)
    open(d + '/cmd.txt', 'w').write(' '.join(cmd) + '\ncuts %r\n' % cuts)
    if not fails: shutil.rmtree(d)
    return fails, len(ev)

if __name__ == '__main__':
    a, b = int(sys.argv[1]), int(sys.argv[2]); china = 'china' in sys.argv[3:]
    tot = bad = ev = 0
    for s in range(a, b):
        r = check(s, china)
        if r is None: continue
        tot += 1; ev += r[1]
        if r[0]: bad += 1; print('MISMATCH', s, r[0], flush=True)
    print('worlds', tot, 'with differences', bad, 'events', ev)
