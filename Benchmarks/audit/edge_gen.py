import json, random, math
from geographiclib.geodesic import Geodesic
G = Geodesic.WGS84
rnd = random.Random(3703)
feats = []; pts = []
# axis-aligned rectangle with hole, star polygon, multipolygon
rect = [[13.25, 52.5], [13.5, 52.5], [13.5, 52.625], [13.25, 52.625], [13.25, 52.5]]
hole = [[13.3125, 52.53125], [13.4375, 52.53125], [13.4375, 52.59375], [13.3125, 52.59375], [13.3125, 52.53125]]
feats.append({'type': 'Feature', 'id': 'rect', 'properties': {}, 'geometry': {'type': 'Polygon', 'coordinates': [rect, hole]}})
tri = [[13.1, 52.4], [13.3, 52.41], [13.17, 52.47], [13.1, 52.4]]
feats.append({'type': 'Feature', 'id': 'tri', 'properties': {}, 'geometry': {'type': 'Polygon', 'coordinates': [tri]}})
conc = [[13.6, 52.3], [13.7, 52.3], [13.7, 52.4], [13.65, 52.33], [13.6, 52.4], [13.6, 52.3]]
feats.append({'type': 'Feature', 'id': 'conc', 'properties': {}, 'geometry': {'type': 'MultiPolygon', 'coordinates': [[conc], [[[13.8, 52.3], [13.9, 52.3], [13.85, 52.35], [13.8, 52.3]]]]}})
circles = [('c1', 13.4, 52.45, 250.0), ('c2', 13.41, 52.455, 1234.5), ('c3', 13.0, 52.2, 40.0)]
for cid, lo, la, r in circles:
    feats.append({'type': 'Feature', 'id': cid, 'properties': {'radius': r}, 'geometry': {'type': 'Point', 'coordinates': [lo, la]}})
def ring_pts(r):
    out = []
    for a, b in zip(r, r[1:]):
        out.append(a)
        for f in [0.5, 0.25, 0.125, 1/3, rnd.random()]:
            out.append([a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f])
    return out
for r in [rect, hole, tri, conc]:
    for p in ring_pts(r):
        pts.append(p)
        for d in [1e-9, 1e-7]:
            pts += [[p[0] + d, p[1]], [p[0] - d, p[1]], [p[0], p[1] + d], [p[0], p[1] - d]]
for cid, lo, la, r in circles:
    for k in range(40):
        az = rnd.uniform(-180, 180)
        for dd in [-0.01, -0.003, -0.001, 0.001, 0.003, 0.01, 0]:
            g = G.Direct(la, lo, az, r + dd)
            pts.append([g['lon2'], g['lat2']])
with open('edge/pos.csv', 'w') as f:
    f.write('device,time,lon,lat\n')
    for i, p in enumerate(pts): f.write('d%d,%d,%r,%r\n' % (i, 1700000000 + i, p[0], p[1]))
json.dump({'type': 'FeatureCollection', 'features': feats}, open('edge/fences.geojson', 'w'))
print(len(pts))
