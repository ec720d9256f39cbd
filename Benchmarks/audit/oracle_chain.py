#!/usr/bin/env python3
"""Chained-run oracle (no hysteresis): run 1 on positions A with fences F1/actions M1, run 2 on B with F2/M2.
Restore events per README 'State': fence-removed / fence-replaced exits and actions-changed re-triggers at each
device's last fix."""
import os
import sys, json, argparse
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import *

def run(fences, fixes, state, engine_actions, dwell_default_ms=600000, initial=True, delay_ms=0):
    """state: dev -> dict(last=fix or None, visits={fid: [F, enter, stayed]}); single batch; returns events"""
    idx = Index(fences)
    clock_ms = max(fx[2] for fx in fixes)
    emit = Emitter(engine_actions)
    bydev = {}
    for fx in fixes: bydev.setdefault(fx[1], []).append(fx)
    late = 0
    for dev in set(bydev) | set(state):
        s = state.setdefault(dev, dict(last=None, visits={}))
        fl = sorted(bydev.get(dev, []), key=lambda x: (x[2], x[0]))
        seen = set()
        def expire_until(t):
            for fid in sorted(s['visits'], key=lambda k: (s['visits'][k][0].exp_ms or 0, k.encode())):
                v = s['visits'][fid]; F = v[0]
                if F.exp_ms is not None and F.exp_ms <= t and F.exp_ms <= clock_ms:
                    emit(F.exp_ms, dev, F, 'exit', s['last'][3], s['last'][4], reason='fence-expired', inside_s=(F.exp_ms - v[1]) / 1000)
                    del s['visits'][fid]
        for fx in fl:
            t, lon, lat = fx[2], fx[3], fx[4]
            if t in seen: continue
            seen.add(t)
            if s['last'] is not None and t <= s['last'][2]: late += 1; continue
            first = s['last'] is None
            expire_until(t)
            cov = {F.id: F for F in idx.covering(lon, lat, t)}
            for fid in sorted(s['visits'], key=lambda q: q.encode()):
                if fid not in cov:
                    v = s['visits'][fid]
                    if v[3] is None: v[3] = t
                    if t - v[3] >= delay_ms:
                        del s['visits'][fid]; emit(t, dev, v[0], 'exit', lon, lat, inside_s=(t - v[1]) / 1000)
            for fid in sorted(cov, key=lambda q: q.encode()):
                F = cov[fid]
                if fid not in s['visits']:
                    s['visits'][fid] = [F, t, False, None]
                    if first:
                        if initial: emit(t, dev, F, 'enter', lon, lat, initial=True)
                    else: emit(t, dev, F, 'enter', lon, lat)
                v = s['visits'][fid]; v[0] = F; v[3] = None
                # Also on the entering fix (dwell 0: SPEC's first fix at or after enter + dwell).
                dw = F.dwell_ms if F.dwell_ms is not None else dwell_default_ms
                if not v[2] and t >= v[1] + dw:
                    v[2] = True; emit(t, dev, F, 'dwell', lon, lat, inside_s=(t - v[1]) / 1000)
            s['last'] = fx
        if s['last'] is not None: expire_until(clock_ms)
    return emit.records(), late

def restore(state, fences2, m1, m2):
    """events when the second run's fences/mask differ (at each device's last fix)."""
    byid = {F.id: F for F in fences2}
    idx = Index(fences2)
    events = []
    for dev, s in state.items():
        if s['last'] is None: continue
        fx = s['last']; t, lon, lat = fx[2], fx[3], fx[4]
        cov = {F.id for F in idx.covering(lon, lat)}
        for fid in sorted(s['visits'], key=lambda q: q.encode()):
            Fo, enter, stayed, pend = s['visits'][fid]
            mo = Fo.actions if Fo.actions is not None else m1
            rec = lambda F, kind, **kw: dict({'time': fmt_time(t), 'device': dev, 'fence': fid}, **({'group': str(F.group)} if F.group is not None else {}), event=kind, lon=lon, lat=lat, **kw)
            if fid not in byid:
                if 'exit' in mo: events.append(rec(Fo, 'exit', reason='fence-removed', inside_s=(t - enter) / 1000))
                del s['visits'][fid]; continue
            Fn = byid[fid]
            if fid not in cov and pend is not None and json.dumps(Fo.geom) == json.dumps(Fn.geom) and Fo.r_ == Fn.r_:
                pass   # same shape: the delay runs on
            elif fid not in cov:
                if 'exit' in mo: events.append(rec(Fo, 'exit', reason='fence-replaced', inside_s=(t - enter) / 1000))
                del s['visits'][fid]; continue
            s['visits'][fid][0] = Fn
            if fid in cov: s['visits'][fid][3] = None
            mn = Fn.actions if Fn.actions is not None else m2
            if not stayed and 'enter' in mn and 'enter' not in mo:
                events.append(rec(Fn, 'enter', reason='actions-changed'))
            if stayed and 'dwell' in mn and 'dwell' not in mo:
                events.append(rec(Fn, 'dwell', reason='actions-changed', inside_s=(t - enter) / 1000))
    events.sort(key=lambda r: (r['time'], r['device'].encode(), r['fence'].encode()))
    return events

if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--fences1'); ap.add_argument('--fences2'); ap.add_argument('--pos1'); ap.add_argument('--pos2')
    ap.add_argument('--actions1', default='enter,exit,dwell'); ap.add_argument('--exit-delay', type=float, default=0); ap.add_argument('--actions2', default='enter,exit,dwell')
    a = ap.parse_args()
    f1 = load_fences(a.fences1); f2 = load_fences(a.fences2)
    m1 = set(a.actions1.split(',')); m2 = set(a.actions2.split(','))
    state = {}
    g1, _ = parse_positions(a.pos1); g2, _ = parse_positions(a.pos2)
    dm = int(a.exit_delay * 1000)
    e1, _ = run(f1, g1, state, m1, delay_ms=dm)
    # fences whose expiry run 1's watermark passed are not loaded again
    wm = max(fx[2] for fx in g1)
    er = []
    for F in f2:
        if F.exp_ms is not None and F.exp_ms <= wm:
            mk = F.actions if F.actions is not None else m2
            for dev, s in state.items():
                v = s['visits'].pop(F.id, None)
                if v is None: continue
                t = max(F.exp_ms, s['last'][2])
                if 'exit' in mk:
                    r = {'time': fmt_time(t), 'device': dev, 'fence': F.id}
                    if F.group is not None: r['group'] = str(F.group)
                    r.update(event='exit', lon=s['last'][3], lat=s['last'][4], reason='fence-expired', inside_s=(t - v[1]) / 1000)
                    er.append(r)
    f2 = [F for F in f2 if F.exp_ms is None or F.exp_ms > wm]
    er = sorted(er + restore(state, f2, m1, m2), key=lambda r: (r['time'], r['device'].encode(), r['fence'].encode()))
    e2, late = run(f2, g2, state, m2, delay_ms=dm)
    print('run1', len(e1), 'restore', len(er), 'run2', len(e2), 'late', late, file=sys.stderr)
    for r in e1 + er + e2: print(json.dumps(r))
