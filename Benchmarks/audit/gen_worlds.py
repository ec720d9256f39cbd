"""Seeded test worlds for the `fence nearest` oracle audit.

world(seed, kind) -> (features, positions) where features is a GeoJSON FeatureCollection dict and
positions a list of (device, time, lon, lat, coord|None).  Kinds: city, country, circles, polar,
antimeridian, china, mixed.
"""
import math
import random

from geographiclib.geodesic import Geodesic
from shapely.geometry import MultiPolygon, Point, Polygon, box
from shapely import affinity

GEO = Geodesic.WGS84
KINDS = ["city", "country", "circles", "polar", "antimeridian", "china", "mixed", "dense", "many", "huge", "longedge"]


def wrap(lon):
    while lon > 180:
        lon -= 360
    while lon < -180:
        lon += 360
    return lon


def clamp_lat(lat):
    return max(-90.0, min(90.0, lat))


def star(rng, clon, clat, rlon, rlat, n, inner=0.45):
    angs = sorted(rng.uniform(0, 2 * math.pi) for _ in range(n))
    pts = []
    for a in angs:
        f = rng.uniform(inner, 1.0)
        pts.append((clon + rlon * f * math.cos(a), clat + rlat * f * math.sin(a)))
    pts.append(pts[0])
    return pts


def feat_poly(fid, polys, coord=None):
    """polys: list of rings-lists."""
    props = {}
    if coord:
        props["coord"] = coord
    if len(polys) == 1:
        g = {"type": "Polygon", "coordinates": polys[0]}
    else:
        g = {"type": "MultiPolygon", "coordinates": polys}
    return {"type": "Feature", "id": fid, "properties": props, "geometry": g}


def feat_circle(fid, lon, lat, r, coord=None):
    props = {"radius": r}
    if coord:
        props["coord"] = coord
    return {"type": "Feature", "id": fid, "properties": props,
            "geometry": {"type": "Point", "coordinates": [lon, lat]}}


def shp_to_rings(p):
    rings = [[list(c) for c in p.exterior.coords]]
    for h in p.interiors:
        rings.append([list(c) for c in h.coords])
    return rings


def snap(rings, target):
    out = []
    for r in rings:
        out.append([[target if abs(x - target) < 1e-9 else x, y] for x, y in r])
    return out


def cut_antimeridian(poly):
    """poly in unwrapped longitudes (may pass 180).  Returns list of rings-lists (RFC 7946 cut)."""
    west = poly.intersection(box(-540, -90, 180, 90))
    east = affinity.translate(poly.intersection(box(180, -90, 540, 90)), xoff=-360)
    parts = []
    for g, tgt in ((west, 180.0), (east, -180.0)):
        geoms = getattr(g, "geoms", [g])
        for p in geoms:
            if p.geom_type != "Polygon" or p.is_empty or p.area == 0:
                continue
            rings = snap(shp_to_rings(p), tgt)
            q = Polygon(rings[0], rings[1:])
            if not q.is_valid:
                return None
            parts.append(rings)
    return parts


def ring_valid(rings):
    try:
        return Polygon(rings[0], rings[1:]).is_valid
    except Exception:
        return False


def star_poly(rng, clon, clat, rlon, rlat, n, hole_p=0.3):
    shell = star(rng, clon, clat, rlon, rlat, n, inner=0.55)
    rings = [shell]
    if rng.random() < hole_p:
        rings.append(list(reversed(star(rng, clon, clat, rlon * 0.3, rlat * 0.3, rng.randint(3, 8), 0.5))))
    return rings


def positions_for(rng, feats, n_random, extra=()):
    """Points inside / near / on edges / on vertices of the fences, plus random and far ones."""
    pts = []
    for ft in feats:
        g = ft["geometry"]
        if g["type"] == "Point":
            lon, lat = g["coordinates"]
            r = ft["properties"]["radius"]
            pts.append((lon, lat))
            for _ in range(3):
                az = rng.uniform(-180, 180)
                for fac in (1.0, rng.uniform(0, 1), rng.uniform(1, 3), 1 + 1e-6, 1 - 1e-6):
                    d = min(r * fac, 19_900_000)
                    res = GEO.Direct(lat, lon, az, d)
                    pts.append((wrap(res["lon2"]), res["lat2"]))
            pts.append((wrap(lon + 180), -lat))  # antipode of the centre
        else:
            polys = g["coordinates"] if g["type"] == "MultiPolygon" else [g["coordinates"]]
            for rings in polys:
                for ring in rings:
                    for _ in range(3):
                        i = rng.randrange(len(ring) - 1)
                        a, b = ring[i], ring[i + 1]
                        t = rng.random()
                        pts.append((a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])))  # on an edge
                        pts.append(tuple(a))  # on a vertex
                        # near the edge, both sides
                        dx, dy = b[0] - a[0], b[1] - a[1]
                        nrm = math.hypot(dx, dy) or 1.0
                        for off in (1e-6, 1e-4, 1e-2):
                            s = rng.choice((-1, 1)) * off
                            x = a[0] + t * dx - dy / nrm * s
                            y = a[1] + t * dy + dx / nrm * s
                            if -180 <= x <= 180 and -90 <= y <= 90:
                                pts.append((x, y))
                    pts.append((wrap(ring[0][0] + 180), -ring[0][1]))  # antipode of a vertex
                shell = Polygon(rings[0], rings[1:])
                minx, miny, maxx, maxy = shell.bounds
                k = 0
                for _ in range(60):
                    x, y = rng.uniform(minx, maxx), rng.uniform(miny, maxy)
                    if shell.covers(Point(x, y)):
                        pts.append((x, y))
                        k += 1
                        if k >= 4:
                            break
                for _ in range(4):
                    pts.append((rng.uniform(minx - 1, maxx + 1), clamp_lat(rng.uniform(miny - 1, maxy + 1))))
    for _ in range(n_random):
        pts.append((rng.uniform(-180, 180), math.degrees(math.asin(rng.uniform(-1, 1)))))
    pts.extend(extra)
    out = []
    for x, y in pts:
        x = max(-180.0, min(180.0, x))
        y = clamp_lat(y)
        out.append((x, y))
    return out


def world(seed, kind):
    rng = random.Random(seed * 1009 + KINDS.index(kind))
    feats = []
    extra = [(0.0, 90.0), (0.0, -90.0), (180.0, 0.0), (-180.0, 0.0)]
    coord_pos = False

    def fid():
        return "%s%d" % (kind[0], len(feats))

    if kind in ("city", "mixed"):
        clon, clat = rng.uniform(-170, 170), rng.uniform(-60, 60)
        for _ in range(rng.randint(2, 8)):
            s = 10 ** rng.uniform(-3, -1.3)  # ~100 m .. 5 km
            cx, cy = clon + rng.uniform(-0.1, 0.1), clat + rng.uniform(-0.1, 0.1)
            if rng.random() < 0.3:
                feats.append(feat_circle(fid(), cx, cy, 10 ** rng.uniform(0, 3.5)))
            else:
                rings = star_poly(rng, cx, cy, s / math.cos(math.radians(cy)), s, rng.randint(3, 12))
                if ring_valid(rings):
                    feats.append(feat_poly(fid(), [rings]))
    if kind in ("country", "mixed"):
        for _ in range(rng.randint(1, 4)):
            cx, cy = rng.uniform(-160, 160), rng.uniform(-65, 65)
            s = rng.uniform(2, 20)
            n = rng.randint(4, 12)
            polys = [star_poly(rng, cx, cy, s, s * 0.7, n, hole_p=0.5)]
            if rng.random() < 0.4:
                polys.append(star_poly(rng, cx + 2.5 * s, cy, s * 0.5, s * 0.4, rng.randint(3, 8), 0.3))
            if all(ring_valid(p) for p in polys) and all(
                    abs(c[1]) < 90 and abs(c[0]) < 180 for p in polys for r in p for c in r):
                mp = MultiPolygon([Polygon(p[0], p[1:]) for p in polys])
                if len(polys) == 1 or mp.is_valid:
                    feats.append(feat_poly(fid(), polys))
    if kind in ("circles", "mixed"):
        for _ in range(rng.randint(2, 8)):
            r = 10 ** rng.uniform(0, math.log10(5e6))
            lat = rng.choice([rng.uniform(-80, 80), rng.uniform(-90, 90), rng.choice([90.0, -90.0, 89.999])])
            feats.append(feat_circle(fid(), rng.uniform(-180, 180), lat, r))
    if kind in ("polar", "mixed"):
        for _ in range(rng.randint(1, 4)):
            north = rng.random() < 0.5
            sg = 1 if north else -1
            c = rng.random()
            if c < 0.3:  # cap
                lat0 = rng.uniform(60, 89.5)
                k = rng.randint(2, 10)
                lats = [lat0 + rng.uniform(-0.4, 0.4) * min(1, 89.9 - lat0) for _ in range(k + 1)]
                if rng.random() < 0.7:
                    lats[-1] = lats[0]
                lons = [-180 + 360 * i / k for i in range(k + 1)]
                ring = [[lons[i], sg * lats[i]] for i in range(k + 1)]
                ring += [[180.0, sg * 90.0], [-180.0, sg * 90.0], ring[0]]
                if not north:
                    ring = list(reversed(ring))
                if ring_valid([ring]):
                    feats.append(feat_poly(fid(), [[ring]]))
            elif c < 0.55:  # wedge
                a = rng.uniform(-180, 170)
                b = min(180, a + rng.uniform(1, 120))
                l = rng.uniform(70, 89.9)
                if rng.random() < 0.5:
                    ring = [[a, sg * l], [b, sg * l], [b, sg * 90.0], [a, sg * 90.0], [a, sg * l]]
                else:
                    ring = [[a, sg * l], [b, sg * l], [(a + b) / 2, sg * 90.0], [a, sg * l]]
                if ring_valid([ring]):
                    feats.append(feat_poly(fid(), [[ring]]))
            elif c < 0.8:  # star near the pole
                cy = sg * rng.uniform(75, 88)
                cx = rng.uniform(-170, 170)
                s = rng.uniform(0.05, 1.5)
                rings = star_poly(rng, cx, cy, min(9, s / math.cos(math.radians(abs(cy)))), s, rng.randint(3, 10))
                if ring_valid(rings) and all(abs(p[1]) <= 90 and abs(p[0]) <= 180 for r in rings for p in r):
                    feats.append(feat_poly(fid(), [rings]))
            else:  # circle at/near the pole
                feats.append(feat_circle(fid(), rng.uniform(-180, 180),
                                         sg * rng.choice([90.0, rng.uniform(85, 90)]), 10 ** rng.uniform(0, 6)))
        for _ in range(20):
            extra.append((rng.uniform(-180, 180), rng.choice((1, -1)) * rng.uniform(80, 90)))
        extra += [(rng.uniform(-180, 180), 90.0), (rng.uniform(-180, 180), -90.0), (180.0, 89.99), (-180.0, -89.99)]
    if kind in ("antimeridian", "mixed"):
        for _ in range(rng.randint(1, 4)):
            c = rng.random()
            if c < 0.6:
                cx = rng.uniform(176, 184)
                cy = rng.uniform(-70, 70)
                s = rng.choice([rng.uniform(0.01, 0.5), rng.uniform(1, 10)])
                rings = star_poly(rng, cx, cy, s / max(0.2, math.cos(math.radians(cy))), s, rng.randint(3, 12))
                if not ring_valid(rings):
                    continue
                parts = cut_antimeridian(Polygon(rings[0], rings[1:]))
                if parts:
                    if all(abs(p[1]) <= 90 for pr in parts for r in pr for p in r):
                        feats.append(feat_poly(fid(), parts))
            elif c < 0.8:  # touching the line from one side only: its edge there is real
                side = rng.choice((180.0, -180.0))
                w = rng.uniform(0.01, 5) * (-1 if side > 0 else 1)
                y0 = rng.uniform(-60, 60)
                h = rng.uniform(0.01, 5)
                ring = [[side, y0], [side + w, y0], [side + w, y0 + h], [side, y0 + h], [side, y0]]
                if w < 0:
                    ring = list(reversed(ring))
                feats.append(feat_poly(fid(), [[ring]]))
            else:
                feats.append(feat_circle(fid(), rng.choice((180.0, -180.0, rng.uniform(179, 180))),
                                         rng.uniform(-80, 80), 10 ** rng.uniform(0, 6)))
        for _ in range(20):
            extra.append((rng.choice((180.0, -180.0, rng.uniform(179, 180), rng.uniform(-180, -179))),
                          rng.uniform(-70, 70)))
    if kind == "china":
        coord_pos = True
        clon, clat = rng.uniform(100, 125), rng.uniform(22, 42)
        for _ in range(rng.randint(2, 6)):
            cs = rng.choice(["gcj02", "bd09ll", "wgs84"])
            s = 10 ** rng.uniform(-3, -0.5)
            cx, cy = clon + rng.uniform(-0.5, 0.5), clat + rng.uniform(-0.5, 0.5)
            if rng.random() < 0.3:
                feats.append(feat_circle(fid(), cx, cy, 10 ** rng.uniform(0, 4), cs))
            else:
                rings = star_poly(rng, cx, cy, s, s, rng.randint(3, 10))
                if ring_valid(rings):
                    feats.append(feat_poly(fid(), [rings], cs))
    if kind == "dense":
        # polygons of over 64 (up to thousands of) positions: the per-polygon box tree over runs
        # of 16 edges; long thin diagonal corridors and rings of islands (multi-box fences)
        for _ in range(rng.randint(1, 3)):
            c = rng.random()
            cx, cy = rng.uniform(-170, 170), rng.uniform(-80, 80)
            if c < 0.45:
                n = rng.choice([65, 100, 257, 1000, 3000])
                s = rng.choice([0.01, 0.5, 5, 15])
                rings = star_poly(rng, cx, cy, s / max(0.3, math.cos(math.radians(cy))), s, n, hole_p=0.4)
                if ring_valid(rings) and all(abs(p[1]) < 90 and abs(p[0]) < 180 for r in rings for p in r):
                    feats.append(feat_poly(fid(), [rings]))
            elif c < 0.75:
                # corridor: a thin band along a diagonal, densified on both sides
                L = rng.uniform(1, 40)
                w = rng.choice([1e-4, 1e-3, 1e-2, 0.2])
                ang = rng.uniform(0, math.pi)
                k = rng.randint(2, 400)
                dx, dy = math.cos(ang), math.sin(ang)
                x0, y0 = cx - dx * L / 2, max(-80, min(80, cy)) - dy * L / 2
                side1, side2 = [], []
                for i in range(k + 1):
                    t = L * i / k
                    wig = rng.uniform(-w / 3, w / 3)
                    side1.append([x0 + dx * t - dy * (w + wig), y0 + dy * t + dx * (w + wig)])
                    side2.append([x0 + dx * t + dy * (w - wig), y0 + dy * t - dx * (w - wig)])
                ring = side1 + list(reversed(side2)) + [side1[0]]
                if ring_valid([ring]) and all(abs(p[1]) < 90 and abs(p[0]) < 180 for p in ring):
                    feats.append(feat_poly(fid(), [[ring]]))
            else:
                # ring of islands
                R = rng.uniform(1, 30)
                m = rng.randint(3, 40)
                polys = []
                for i in range(m):
                    a = 2 * math.pi * i / m
                    px = cx + R * math.cos(a)
                    py = max(-85, min(85, cy + R * 0.6 * math.sin(a)))
                    s = rng.uniform(0.001, min(0.5, R * 0.5 / m))
                    polys.append(star_poly(rng, px, py, s, s, rng.randint(3, 20), hole_p=0.1))
                ok = all(ring_valid(p) and all(abs(q[1]) < 90 and abs(q[0]) < 180 for r in p for q in r)
                         for p in polys)
                if ok and MultiPolygon([Polygon(p[0], p[1:]) for p in polys]).is_valid:
                    feats.append(feat_poly(fid(), polys))
    if kind == "many":
        # hundreds of small fences over the globe: the R-tree search with its far bounds
        for _ in range(rng.randint(100, 400)):
            cx = rng.uniform(-180, 180)
            cy = math.degrees(math.asin(rng.uniform(-1, 1)))
            if rng.random() < 0.5:
                feats.append(feat_circle(fid(), cx, cy, 10 ** rng.uniform(0, 5)))
            else:
                s = 10 ** rng.uniform(-3, 0)
                if abs(cy) + s >= 89.9 or abs(cx) + s / max(0.05, math.cos(math.radians(cy))) >= 179.9:
                    continue
                rings = star_poly(rng, cx, cy, s / max(0.05, math.cos(math.radians(cy))), s, rng.randint(3, 8), 0)
                if ring_valid(rings):
                    feats.append(feat_poly(fid(), [rings]))
    if kind == "huge":
        # edges longer than 180 degrees, polygons over a hemisphere, circles up to the limit
        for _ in range(rng.randint(1, 3)):
            c = rng.random()
            if c < 0.35:
                a = rng.uniform(-180, -90)
                b = min(180.0, a + rng.uniform(181, 359))
                l1 = rng.uniform(-85, 60)
                l2 = min(89.9, l1 + rng.uniform(0.01, 60))
                ring = [[a, l1], [b, l1], [b, l2], [a, l2], [a, l1]]
                feats.append(feat_poly(fid(), [[ring]]))
            elif c < 0.6:
                ring = [[rng.uniform(-180, -100), rng.uniform(-80, -10)],
                        [rng.uniform(100, 180), rng.uniform(-80, -10)],
                        [rng.uniform(-60, 60), rng.uniform(10, 89)]]
                ring.append(ring[0])
                if ring_valid([ring]):
                    feats.append(feat_poly(fid(), [[ring]]))
            else:
                feats.append(feat_circle(fid(), rng.uniform(-180, 180), rng.uniform(-90, 90),
                                         rng.choice([rng.uniform(5e6, 2.0004e7), 2.0004e7, 1.0e7])))
        for _ in range(40):
            extra.append((rng.uniform(-180, 180), math.degrees(math.asin(rng.uniform(-1, 1)))))
    if kind == "longedge":
        # thin triangles with one edge over 90 degrees of longitude (the engine samples such an
        # edge at 9 points on the sphere before its golden-section search); positions a few
        # hundred to a few thousand kilometres off
        for _ in range(rng.randint(1, 2)):
            ax, ay = rng.uniform(-180, -10), rng.uniform(-70, 70)
            bx, by = min(180.0, ax + rng.uniform(91, 250)), rng.uniform(-70, 70)
            t = rng.uniform(0.2, 0.8)
            cx, cy = ax + t * (bx - ax), ay + t * (by - ay) + rng.choice((-1, 1)) * rng.uniform(0.5, 10)
            ring = [[ax, ay], [bx, by], [cx, max(-89, min(89, cy))], [ax, ay]]
            if ring_valid([ring]):
                feats.append(feat_poly(fid(), [[ring]]))
                for _ in range(60):
                    u = rng.uniform(0, 1)
                    x = ax + u * (bx - ax)
                    y = ay + u * (by - ay) + rng.uniform(-30, 30)
                    extra.append((wrap(x), clamp_lat(y)))
    pts = positions_for(rng, feats, 15, extra)
    if kind == "many":
        # not every fence's own points: a sample of them plus far, random and antipodal ones
        pts = rng.sample(pts, min(len(pts), 250))
        for _ in range(60):
            pts.append((rng.uniform(-180, 180), math.degrees(math.asin(rng.uniform(-1, 1)))))
    pos = []
    for i, (x, y) in enumerate(pts):
        coord = rng.choice(["gcj02", "bd09ll", "wgs84"]) if coord_pos else None
        pos.append(("dev%d" % (i % 7), i + 1, x, y, coord))
    return {"type": "FeatureCollection", "features": feats}, pos
