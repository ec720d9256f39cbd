#!/usr/bin/env python3
"""Data for session 35's small-batch figures (Benchmarks/HISTORY.md), standard library only.

  steady_fleet.py fleet DEVICES MINUTES INTERVAL OUT.csv
      DEVICES devices, each reporting every INTERVAL seconds from a random phase for MINUTES
      minutes, from 2023-11-14T22:13:20Z (1.7e9 s), fixes in time order. Each device starts
      uniformly over fence-bench's region (longitude -5..15, latitude 35..55); each later fix is
      15 m/s x INTERVAL from that start in a random direction. Columns device,time,lon,lat.
  steady_fleet.py expire IN.geojson OUT.geojson FRACTION SPAN
      A copy of a fence file (fence-bench --geojson) in which each fence, with probability
      FRACTION, expires at a uniform time within SPAN seconds after 1.7e9 s.

Session 35 used `fleet 500000 10 60` (5M fixes) with `expire` 0.3 over 600 s of fence-bench's
10k fences, and the fleet's first 1M fixes with `expire` 0.003 over 120 s of its 1M fences.
"""
import json, math, random, sys

def fleet(devices, minutes, interval, out):
    rng = random.Random(35)
    n = int(minutes * 60 // interval)
    phase = [rng.uniform(0, interval) for _ in range(devices)]
    start = [(rng.uniform(-5, 15), rng.uniform(35, 55)) for _ in range(devices)]
    step = 15 * interval / 111000.0
    with open(out, "w") as f:
        f.write("device,time,lon,lat\n")
        # In time order: fix k of every device, devices by phase (phase < interval).
        order = sorted(range(devices), key=lambda d: phase[d])
        for k in range(n):
            for d in order:
                lon, lat = start[d]
                if k > 0:
                    a = rng.uniform(0, 2 * math.pi)
                    lon += math.cos(a) * step
                    lat += math.sin(a) * step
                f.write(f"dev-{d},{1.7e9 + phase[d] + interval * k:.3f},{lon:.6f},{lat:.6f}\n")

def expire(src, out, fraction, span):
    rng = random.Random(36)
    doc = json.load(open(src))
    for feature in doc["features"]:
        if rng.random() < fraction:
            feature["properties"]["expires"] = round(1.7e9 + rng.uniform(0, span), 3)
    json.dump(doc, open(out, "w"))

if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "fleet":
        fleet(int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
    elif len(sys.argv) == 6 and sys.argv[1] == "expire":
        expire(sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]))
    else:
        sys.exit(__doc__)
