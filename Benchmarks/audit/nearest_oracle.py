"""Independent oracle for `fence nearest` (adaptive reporting).

Written from SPEC.md ("Adaptive reporting") and README.md only, without reading the Swift
sources.  For a position P and a set of fences:

  * circle: |geodesic(P, centre) - radius| on WGS84 (geographiclib), inside when
    geodesic <= radius;
  * polygon: the geodesic distance to the nearest point of the boundary, where every edge is a
    straight line in longitude/latitude (RFC 7946): the edge is parametrised linearly in
    (lon, lat) and the geodesic distance from P is minimised along it (dense samples with
    pyproj's vectorised Karney geodesic, then a bounded Brent refinement with geographiclib
    around every sampled local minimum; the ends are always measured).  Holes count.
    Left out as README says: edges on longitude +180/-180 where the other line has edges of the
    same fence over the same latitudes (RFC 7946 cut), and edges along latitude +-90.
    Inside = shapely `covers` (boundary counts as inside); a position on the antimeridian is
    tested as both +180 and -180.
  * signed distance: negative inside, 0 on the boundary (never -0).
  * nearest fence: the smallest |signed distance|.
  * delay: clamp(|d| / max_speed, min_delay, max_delay).

Fences with `coord` gcj02/bd09ll are converted to WGS84 vertex by vertex (exact inverse by
iteration of the published formulas, inside China's box only), and the edges are then straight
in WGS84 longitude/latitude.
"""
import json
import math

import numpy as np
from geographiclib.geodesic import Geodesic
from pyproj import Geod
from scipy.optimize import minimize_scalar
from shapely.geometry import Point, Polygon, shape
from shapely.prepared import prep

from coordconv import in_china as in_china_box, wgs_to_gcj

GEO = Geodesic.WGS84
GEOD = Geod(ellps="WGS84")
DIST = Geodesic.DISTANCE


def gdist(lon1, lat1, lon2, lat2):
    return GEO.Inverse(lat1, lon1, lat2, lon2, DIST)["s12"]


def gdist_vec(lon1, lat1, lons, lats):
    n = len(lons)
    _, _, d = GEOD.inv(np.full(n, float(lon1)), np.full(n, float(lat1)), np.asarray(lons, float),
                       np.asarray(lats, float))
    return np.asarray(d)


# ---------------------------------------------------------------- coordinate systems
# The published forward formulas are coordconv.py's (shared with fuzz3.py's worlds); the
# inverse below is this oracle's own (fixed-point iteration).
_XPI = math.pi * 3000.0 / 180.0


def gcj_to_bd(lon, lat):
    if not in_china_box(lon, lat):
        return lon, lat
    z = math.sqrt(lon * lon + lat * lat) + 0.00002 * math.sin(lat * _XPI)
    th = math.atan2(lat, lon) + 0.000003 * math.cos(lon * _XPI)
    return z * math.cos(th) + 0.0065, z * math.sin(th) + 0.006


def wgs_to_bd(lon, lat):
    return gcj_to_bd(*wgs_to_gcj(lon, lat))


def _invert(fwd, lon, lat):
    if not in_china_box(lon, lat):
        return lon, lat
    x, y = lon, lat
    for _ in range(100):
        fx, fy = fwd(x, y)
        dx, dy = fx - lon, fy - lat
        x, y = x - dx, y - dy
        if abs(dx) < 1e-14 and abs(dy) < 1e-14:
            break
    return x, y


def to_wgs84(lon, lat, coord):
    c = (coord or "wgs84").lower().replace("-", "").replace("_", "").replace(" ", "")
    if c == "wgs84":
        return lon, lat
    if c == "gcj02":
        return _invert(wgs_to_gcj, lon, lat)
    if c in ("bd09ll", "bd09"):
        return _invert(wgs_to_bd, lon, lat)
    raise ValueError(coord)


# ---------------------------------------------------------------- fences
class Circle:
    kind = "circle"

    def __init__(self, fid, lon, lat, radius):
        self.id, self.lon, self.lat, self.r = fid, lon, lat, radius

    def signed(self, lon, lat, best=math.inf):
        d = gdist(self.lon, self.lat, lon, lat)
        if d <= self.r:
            v = self.r - d
            return 0.0 if v == 0 else -v
        return d - self.r


class Edge:
    __slots__ = ("a", "b", "L")

    def __init__(self, a, b):
        self.a, self.b = a, b
        # length of the lon/lat-straight path (an upper bound of every geodesic between two of its points)
        n = 256
        t = np.linspace(0.0, 1.0, n + 1)
        lons = a[0] + t * (b[0] - a[0])
        lats = a[1] + t * (b[1] - a[1])
        _, _, d = GEOD.inv(lons[:-1], lats[:-1], lons[1:], lats[1:])
        # chords of a curve underestimate its length a little; pad (only used for pruning)
        self.L = float(np.sum(d)) * 1.001 + 1e-6


def _edge_samples(edge, lon, lat):
    """Dense samples of the geodesic distance along the lon/lat-straight edge: (t, f, step),
    step an upper bound of the path length between two samples."""
    (x0, y0), (x1, y1) = edge.a, edge.b
    n = int(min(8192, max(96, math.ceil(edge.L / 500.0))))
    t = np.linspace(0.0, 1.0, n + 1)
    f = gdist_vec(lon, lat, x0 + t * (x1 - x0), y0 + t * (y1 - y0))
    return t, f, edge.L / n * 1.01 + 1e-9


def _local_minima(f):
    n = len(f) - 1
    left = np.r_[True, f[1:] <= f[:-1]]
    right = np.r_[f[:-1] <= f[1:], True]
    return np.nonzero(left & right)[0]


def _refine(edge, lon, lat, t, i):
    """Least distance within the bracket of samples i-1..i+1 (distance is 1-Lipschitz along the
    path, so the bracket holds every point within a step of sample i)."""
    (x0, y0), (x1, y1) = edge.a, edge.b
    n = len(t) - 1

    def g(tt):
        return gdist(lon, lat, x0 + tt * (x1 - x0), y0 + tt * (y1 - y0))

    lo, hi = t[max(i - 1, 0)], t[min(i + 1, n)]
    # zoom: 33 samples across the bracket, keep the two steps around the least, until the
    # bracket is under 1e-5 m of path (or of t's resolution); then Brent on what is left
    tb = t[i]
    for _ in range(40):
        if (hi - lo) * edge.L < 1e-5 or hi - lo < 1e-15:
            break
        ts = np.linspace(lo, hi, 33)
        fs = gdist_vec(lon, lat, x0 + ts * (x1 - x0), y0 + ts * (y1 - y0))
        j = int(np.argmin(fs))
        tb = ts[j]
        lo, hi = ts[max(j - 1, 0)], ts[min(j + 1, 32)]
    r = minimize_scalar(g, bounds=(lo, hi), method="bounded",
                        options={"xatol": 1e-16, "maxiter": 60})
    return min(float(r.fun), g(tb), g(t[i]))


def _subtract(iv, others):
    """Parts of interval iv=(lo,hi) not covered by the union of `others`."""
    parts = [iv]
    for (a, b) in others:
        nxt = []
        for (lo, hi) in parts:
            if b <= lo or a >= hi:
                nxt.append((lo, hi))
                continue
            if a > lo:
                nxt.append((lo, a))
            if b < hi:
                nxt.append((b, hi))
        parts = nxt
    return parts


class PolyFence:
    kind = "polygon"

    def __init__(self, fid, polys):
        """polys: list of (shell, [holes]) with rings as lists of (lon, lat) in WGS84."""
        self.id = fid
        self.geoms = [Polygon(s, h) for s, h in polys]
        self.prepared = [prep(g) for g in self.geoms]
        raw = []
        for s, hs in polys:
            for ring in [s] + list(hs):
                for i in range(len(ring) - 1):
                    a, b = tuple(ring[i]), tuple(ring[i + 1])
                    if a == b:
                        continue
                    raw.append((a, b))
        # edges along latitude +-90 are one point: left out
        raw = [(a, b) for (a, b) in raw if not (a[1] == b[1] and abs(a[1]) == 90.0)]
        # edges on +180 / -180: left out where the other line has edges over the same latitudes
        on = {180.0: [], -180.0: []}
        for (a, b) in raw:
            if a[0] == b[0] and abs(a[0]) == 180.0:
                on[a[0]].append((min(a[1], b[1]), max(a[1], b[1])))
        edges = []
        for (a, b) in raw:
            if a[0] == b[0] and abs(a[0]) == 180.0:
                lo, hi = min(a[1], b[1]), max(a[1], b[1])
                for (p, q) in _subtract((lo, hi), on[-a[0]]):
                    if q > p:
                        edges.append(Edge((a[0], p), (a[0], q)))
            else:
                edges.append(Edge(a, b))
        self.edges = edges
        self.vl = np.array([[e.a[0], e.a[1], e.b[0], e.b[1]] for e in edges], float).reshape(-1, 4)
        self.L = np.array([e.L for e in edges], float)

    def inside(self, lon, lat):
        pts = [Point(lon, lat)]
        if abs(lon) == 180.0:
            pts.append(Point(-lon, lat))
        return any(p.covers(pt) for p in self.prepared for pt in pts)

    def unsigned(self, lon, lat, best=math.inf):
        if len(self.edges) == 0:
            return math.inf
        dA = gdist_vec(lon, lat, self.vl[:, 0], self.vl[:, 1])
        dB = gdist_vec(lon, lat, self.vl[:, 2], self.vl[:, 3])
        lb = np.maximum((dA + dB - self.L) / 2.0, 0.0)
        best = min(best, float(np.min(np.minimum(dA, dB))))
        # stage 1: dense samples of every edge that could hold the nearest point
        cands = []
        for k in np.argsort(lb):
            if lb[k] > best * (1 + 1e-9) + 1e-6:
                break
            t, f, step = _edge_samples(self.edges[k], lon, lat)
            best = min(best, float(np.min(f)))
            for i in _local_minima(f):
                cands.append((f[i] - step, int(k), int(i), t))
        # stage 2: refine the sampled local minima that could beat the best, least bound first
        cands.sort(key=lambda c: c[0])
        for lbound, k, i, t in cands:
            if lbound > best:
                break
            best = min(best, _refine(self.edges[k], lon, lat, t, i))
        return best

    def signed(self, lon, lat, best=math.inf):
        d = self.unsigned(lon, lat, best)
        if self.inside(lon, lat):
            return 0.0 if d == 0 else -d
        return d


def load_fences(path):
    with open(path) as fh:
        doc = json.load(fh)
    out = []
    for ft in doc["features"]:
        fid = str(ft.get("id", ft.get("properties", {}).get("id")))
        props = ft.get("properties") or {}
        coord = props.get("coord", "wgs84")
        g = ft["geometry"]
        conv = lambda c: to_wgs84(float(c[0]), float(c[1]), coord)
        if g["type"] == "Point":
            lon, lat = conv(g["coordinates"])
            out.append(Circle(fid, lon, lat, float(props["radius"])))
        else:
            polys = g["coordinates"] if g["type"] == "MultiPolygon" else [g["coordinates"]]
            pp = []
            for rings in polys:
                rr = [[conv(c) for c in ring] for ring in rings]
                pp.append((rr[0], rr[1:]))
            out.append(PolyFence(fid, pp))
    return out


def nearest(fences, lon, lat, exact=()):
    """Returns (fence id, signed distance, per-fence dict).  per-fence values are exact for the
    nearest fence and those named in `exact`; for the others a value whose magnitude is at least
    the nearest's (fences that cannot be nearer are not searched to the end)."""
    per = {}
    best = math.inf
    bid = None
    order = sorted(fences, key=lambda f: f.kind != "circle")  # cheap ones first
    for f in order:
        d = f.signed(lon, lat, math.inf if f.id in exact else best)
        per[f.id] = d
        if abs(d) < best:
            best, bid = abs(d), f.id
    return bid, (per[bid] if bid is not None else None), per


def delay(d, max_speed=30.0, min_delay=1.0, max_delay=3600.0):
    return min(max_delay, max(min_delay, abs(d) / max_speed))
