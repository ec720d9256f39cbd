#!/usr/bin/env python3
"""Writes the seeds of the `wkb` fuzz target into corpus/wkb/: valid WKB Points, Polygons and
MultiPolygons in both byte orders, ISO and PostGIS-extended (Z, M, ZM, SRID) flavours, and a
few damaged ones (truncated, huge counts, NaN/inf coordinates, a GeometryCollection, an open
ring, a bowtie). Standard library only (struct): `python3 Tests/Fuzz/make-wkb-seeds.py`."""
import math
import os
import struct

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "wkb")
os.makedirs(out, exist_ok=True)


class W:
    def __init__(self, big=False, z=None, srid=None):
        self.big, self.z, self.srid, self.b = big, z, srid, bytearray()

    def u32(self, v):
        self.b += struct.pack(">I" if self.big else "<I", v & 0xFFFFFFFF)

    def f64(self, v):
        self.b += struct.pack(">d" if self.big else "<d", v)

    def dims(self):
        return {None: 0, "iso-z": 1, "iso-m": 1, "iso-zm": 2, "ewkb-z": 1, "ewkb-zm": 2}[self.z]

    def header(self, t, top=True):
        self.b.append(0 if self.big else 1)
        code = t + {None: 0, "iso-z": 1000, "iso-m": 2000, "iso-zm": 3000}.get(self.z, 0)
        if self.z == "ewkb-z":
            code |= 0x80000000
        if self.z == "ewkb-zm":
            code |= 0xC0000000
        if top and self.srid is not None:
            code |= 0x20000000
        self.u32(code)
        if top and self.srid is not None:
            self.u32(self.srid)

    def pos(self, x, y):
        self.f64(x)
        self.f64(y)
        for k in range(self.dims()):
            self.f64(7.0 + k)

    def rings(self, rings):
        self.u32(len(rings))
        for r in rings:
            self.u32(len(r))
            for x, y in r:
                self.pos(x, y)


def square(x, y, s):
    return [(x, y), (x + s, y), (x + s, y + s), (x, y + s), (x, y)]


def polygon(rings, **kw):
    w = W(**kw)
    w.header(3)
    w.rings(rings)
    return bytes(w.b)


def multi(polys, **kw):
    w = W(**kw)
    w.header(6)
    w.u32(len(polys))
    for rings in polys:
        w.header(3, top=False)
        w.rings(rings)
    return bytes(w.b)


def point(x, y, **kw):
    w = W(**kw)
    w.header(1)
    w.pos(x, y)
    return bytes(w.b)


def circle(cx, cy, r, n):
    ring = [(cx + r * math.cos(2 * math.pi * k / n), cy + r * math.sin(2 * math.pi * k / n)) for k in range(n)]
    return ring + [ring[0]]


holed = [square(0, 0, 1), list(reversed(square(0.25, 0.25, 0.5)))]
seeds = {
    "point-le.wkb": point(13.4, 52.5),
    "point-be-isoz.wkb": point(-0.1, 51.5, big=True, z="iso-z"),
    "polygon-le.wkb": polygon([square(0, 0, 1)]),
    "polygon-be.wkb": polygon([square(0.02, 0, 0.02)], big=True),
    "polygon-hole-isozm.wkb": polygon(holed, z="iso-zm"),
    "polygon-hole-ewkbz-srid.wkb": polygon(holed, big=True, z="ewkb-z", srid=4326),
    "polygon-isom.wkb": polygon([circle(179.9, -10, 0.2, 24)], z="iso-m"),
    "multipolygon-le.wkb": multi([[square(0, 0, 1)], [square(2, 2, 1)], [square(10, 10, 0.5)]]),
    "multipolygon-be-ewkbzm.wkb": multi([[square(-1, -1, 0.5)], holed], big=True, z="ewkb-zm", srid=3857),
    "multipolygon-empty-part.wkb": multi([[], [square(5, 5, 1)]]),
    # Damaged ones.
    "bad-truncated.wkb": polygon([square(0, 0, 1)])[:-8],
    "bad-huge-count.wkb": bytes([1]) + struct.pack("<III", 3, 1, 0xFFFFFFFF) + b"\0" * 32,
    "bad-huge-multi.wkb": bytes([0]) + struct.pack(">II", 6, 0x7FFFFFFF) + polygon([square(0, 0, 1)], big=True),
    "bad-nan.wkb": polygon([[(0, 0), (float("nan"), 0), (1, 1), (0, 1), (0, 0)]]),
    "bad-inf.wkb": polygon([[(float("inf"), 0), (1, 0), (1, 1), (float("inf"), 0)]], big=True),
    "bad-open-ring.wkb": polygon([square(0, 0, 1)[:-1] + [(0, 0.5)]]),
    "bad-bowtie.wkb": polygon([[(0, 0), (1, 1), (1, 0), (0, 1), (0, 0)]]),
    "bad-collection.wkb": bytes([1]) + struct.pack("<II", 7, 2) + polygon([square(0, 0, 1)]) + point(0, 0),
    "bad-nested-multi.wkb": bytes([1]) + struct.pack("<II", 6, 1) + multi([[square(0, 0, 1)]]),
    "bad-overlapping.wkb": multi([[square(0, 0, 1)], [square(0.5, 0.5, 1)]]),
}
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print(f"{len(seeds)} seeds in {out}")
