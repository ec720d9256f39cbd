import json, random
from geographiclib.geodesic import Geodesic
G=Geodesic.WGS84; rnd=random.Random(3706)
feats=[]; circ=[]
specs=[('anti',179.9,10.0,50000),('pole',0,89.95,20000),('spole',45,-89.99,5000),('huge',10,10,20004000),('big',-60,-30,5000000),('tiny',13.4,52.5,0.5),('half',0,0,10001965.7)]
for cid,lo,la,r in specs:
    feats.append({'type':'Feature','id':cid,'properties':{'radius':r},'geometry':{'type':'Point','coordinates':[lo,la]}})
pts=[]
for cid,lo,la,r in specs:
    for k in range(150):
        az=rnd.uniform(-180,180); d=r*rnd.uniform(0.9,1.1) if r<2e7 else rnd.uniform(0,2.0e7)
        g=G.Direct(la,lo,az,d); pts.append([g['lon2'],g['lat2']])
for k in range(2000): pts.append([rnd.uniform(-180,180), rnd.uniform(-90,90)])
pts += [[-170.0,-10.0],[10-180,-10],[180,10],[-180,10],[0,90],[0,-90],[123,90]]
with open('glob/pos.csv','w') as f:
    f.write('device,time,lon,lat\n')
    for i,p in enumerate(pts): f.write('g%d,%d,%r,%r\n'%(i,1700000000+i,p[0],p[1]))
json.dump({'type':'FeatureCollection','features':feats},open('glob/fences.geojson','w'))
