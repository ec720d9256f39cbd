"""Compare `fence nearest` against nearest_oracle.py over seeded worlds.

usage: compare_nearest.py FENCE_BINARY OUTDIR SEED_FROM SEED_TO [KIND ...]
Writes OUTDIR/diffs.jsonl (one line per difference beyond tolerance) and prints per-kind
maximum absolute/relative errors.
"""
import csv
import io
import json
import math
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_worlds  # noqa: E402
import nearest_oracle as orc  # noqa: E402


def tol(d):
    # README: circles under 1 cm; polygon edges within 2e-6 of an independent scan.
    # 0.005 for the two printed decimals.
    return 0.01 + 2e-6 * abs(d) + 0.005


def run_world(binary, outdir, seed, kind, stats, diffs):
    feats, pos = gen_worlds.world(seed, kind)
    if not feats["features"]:
        return 0
    d = os.path.join(outdir, "w_%s_%d" % (kind, seed))
    os.makedirs(d, exist_ok=True)
    fpath = os.path.join(d, "fences.geojson")
    ppath = os.path.join(d, "positions.csv")
    with open(fpath, "w") as fh:
        json.dump(feats, fh)
    has_coord = any(p[4] for p in pos)
    with open(ppath, "w") as fh:
        fh.write("device,time,lon,lat" + (",coord" if has_coord else "") + "\n")
        for dev, t, x, y, c in pos:
            fh.write("%s,%d,%r,%r%s\n" % (dev, t, x, y, ("," + c) if has_coord else ""))
    rng = random.Random(seed)
    speed = rng.choice([30.0, 1.5, 250.0, 0.7])
    mind = rng.choice([1.0, 0.0, 5.0])
    maxd = rng.choice([3600.0, 600.0, 86400.0])
    cmd = [binary, "nearest", "--fences", fpath, "--positions", ppath, "--max-speed", repr(speed),
           "--min-delay", repr(mind), "--max-delay", repr(maxd), "--threads", "1"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0 or "rejected" in r.stderr and "(0 rejected)" not in r.stderr:
        diffs.append({"kind": kind, "seed": seed, "type": "run", "rc": r.returncode,
                      "stderr": r.stderr[-2000:], "cmd": cmd})
    refused = set()
    fences = orc.load_fences(fpath)
    # fences the engine refused (named on stderr) are left out of the oracle too
    for line in r.stderr.splitlines():
        for f in fences:
            if ('"%s"' % f.id) in line or ("fence %s" % f.id) in line or (" %s:" % f.id) in line:
                refused.add(f.id)
    if refused:
        diffs.append({"kind": kind, "seed": seed, "type": "refused", "ids": sorted(refused),
                      "stderr": r.stderr[-2000:]})
    fences = [f for f in fences if f.id not in refused]
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    by_t = {}
    for row in rows:
        by_t[row["time"]] = row
    n = 0
    for dev, t, x, y, c in pos:
        iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".000Z"
        row = by_t.get(iso)
        lon, lat = orc.to_wgs84(x, y, c) if c else (x, y)
        if row is None:
            diffs.append({"kind": kind, "seed": seed, "type": "missing", "t": t, "lon": x, "lat": y})
            continue
        n += 1
        bid, bd, per = orc.nearest(fences, lon, lat, exact=(row["fence"],))
        ed = float(row["distance_m"])
        ef = row["fence"]
        err = abs(ed - bd)
        k = kind
        fk = next(f for f in fences if f.id == bid).kind
        key = (k, fk)
        s = stats.setdefault(key, {"n": 0, "max_abs": 0.0, "max_rel": 0.0, "worst": None})
        s["n"] += 1
        rel = max(0.0, err - 0.005) / max(abs(bd), 1.0)  # printed to 0.01
        if err > s["max_abs"]:
            s["max_abs"] = err
            s["worst"] = (seed, t, x, y, ed, bd)
        if rel > s["max_rel"]:
            s["max_rel"] = rel
            s["worst_rel"] = (seed, t, x, y, ed, bd)
        problems = []
        if err > tol(bd):
            problems.append("distance")
        if ef != bid:
            od = per.get(ef)
            if od is None or abs(od - ed) > tol(od):
                problems.append("fence")
        if row["distance_m"] in ("-0.00",):
            problems.append("negzero")
        want_delay = orc.delay(bd, speed, mind, maxd)
        ed_delay = float(row["delay_s"])
        if abs(ed_delay - want_delay) > 0.051 + tol(bd) / speed:
            problems.append("delay")
        if problems:
            diffs.append({"kind": kind, "seed": seed, "type": ",".join(problems), "t": t, "lon": x,
                          "lat": y, "coord": c, "engine": [ef, ed, ed_delay],
                          "oracle": [bid, bd, want_delay, per.get(ef)], "dir": d,
                          "speed": speed, "min": mind, "max": maxd})
    return n


def main():
    binary, outdir, a, b = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    kinds = sys.argv[5:] or gen_worlds.KINDS
    os.makedirs(outdir, exist_ok=True)
    stats, diffs = {}, []
    worlds = npos = 0
    t0 = time.time()
    for seed in range(a, b):
        for kind in kinds:
            m = run_world(binary, outdir, seed, kind, stats, diffs)
            worlds += 1 if m else 0
            npos += m
    with open(os.path.join(outdir, "diffs.jsonl"), "w") as fh:
        for x in diffs:
            fh.write(json.dumps(x) + "\n")
    with open(os.path.join(outdir, "stats.json"), "w") as fh:
        json.dump({"%s/%s" % k: v for k, v in stats.items()}, fh, indent=1)
    print("worlds %d positions %d diffs %d (%.0f s)" % (worlds, npos, len(diffs), time.time() - t0))
    for k in sorted(stats):
        v = stats[k]
        print("%-14s %-8s n=%6d max_abs=%.4g m max_rel=%.3g worst=%s worst_rel=%s" % (
            k[0], k[1], v["n"], v["max_abs"], v["max_rel"], v["worst"], v.get("worst_rel")))
    kinds_seen = {}
    for x in diffs:
        kinds_seen[(x["kind"], x["type"])] = kinds_seen.get((x["kind"], x["type"]), 0) + 1
    for k, v in sorted(kinds_seen.items()):
        print("diff", k, v)


if __name__ == "__main__":
    main()
