#!/usr/bin/env python3
"""Rebuilds the sample data in this folder from the PyPI package tracktable-data.

    python3 Data/make_data.py            # downloads tracktable-data with pip, then converts

Writes:
  ny_harbor_2020-12-01_07.csv.gz  AIS fixes of 513 vessels in New York Harbor, 1-7 Dec 2020
                                  (columns mmsi,BaseDateTime,LON,LAT as AIS exports name them)
  ports.geojson                   World Port Index ports as circle fences (Point + radius)
"""
import csv
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
TRACKS = "tracktable_data/python_example_data/NYHarbor_2020_12_first_week.traj"
PORTS = "tracktable_data/python_info_data/ports.csv"
# Fence radius by the World Port Index's harbor size, in metres.
RADIUS = {"Very Small": 1000, "Small": 1500, "Medium": 2500, "Large": 4000}


def fetch(workdir):
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", workdir, "tracktable-data==1.7.3.1"],
                   check=True)
    wheel = glob.glob(os.path.join(workdir, "tracktable_data-*.whl"))[0]
    with zipfile.ZipFile(wheel) as z:
        z.extract(TRACKS, workdir)
        z.extract(PORTS, workdir)


def convert_tracks(src, dst):
    """The .traj format: per line a trajectory header ending in *P*,... then points of
    (object id, timestamp, lon, lat)."""
    rows = []
    with open(src) as f:
        for line in f:
            fields = line.rstrip("\n").split(",")
            start = fields.index("*P*") + 6
            for i in range(start, len(fields) - 3, 4):
                rows.append((fields[i], fields[i + 1].replace(" ", "T"), fields[i + 2], fields[i + 3]))
    rows.sort(key=lambda r: (r[1], r[0]))
    with gzip.GzipFile(dst, "wb", mtime=0) as raw:
        out = csv.writer(open_text(raw), lineterminator="\n")
        out.writerow(["MMSI", "BaseDateTime", "LON", "LAT"])
        out.writerows(rows)
    return len(rows)


def open_text(raw):
    import io
    return io.TextIOWrapper(raw, encoding="utf-8", write_through=True)


def convert_ports(src, dst):
    features = []
    with open(src, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            radius = RADIUS.get(row["Harbor Size"].strip())
            if radius is None:
                continue
            features.append({
                "type": "Feature",
                "geometry": {"type": "Point",
                             "coordinates": [round(float(row["Longitude"]), 6), round(float(row["Latitude"]), 6)]},
                "properties": {
                    "id": "WPI-" + row["World Port Index Number"].strip(),
                    "name": row["Main Port Name"].strip(),
                    "group": row["Country Code"].strip(),
                    "radius": radius,
                    "harbor_size": row["Harbor Size"].strip(),
                },
            })
    with open(dst, "w", encoding="utf-8") as f:
        f.write('{"type":"FeatureCollection","features":[\n')
        f.write(",\n".join(json.dumps(x, ensure_ascii=False, separators=(",", ":")) for x in features))
        f.write("\n]}\n")
    return len(features)


def main():
    with tempfile.TemporaryDirectory() as work:
        fetch(work)
        n = convert_tracks(os.path.join(work, TRACKS), os.path.join(HERE, "ny_harbor_2020-12-01_07.csv.gz"))
        m = convert_ports(os.path.join(work, PORTS), os.path.join(HERE, "ports.geojson"))
    print(f"{n} fixes, {m} port fences")


if __name__ == "__main__":
    main()
