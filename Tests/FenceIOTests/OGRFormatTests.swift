import FenceEngine
@testable import FenceIO
import XCTest

/// The same seven features in every format OGR writes: each must load the same three fences
/// (compared with hand-written values) and refuse the same four features with the same words.
final class OGRFormatTests: XCTestCase {
    typealias G = GDALFixtures

    static let square = [(0.0, 0.0), (4.0, 0.0), (4.0, 4.0), (0.0, 4.0), (0.0, 0.0)]
    static let hole = [(1.0, 1.0), (1.0, 2.0), (2.0, 2.0), (2.0, 1.0), (1.0, 1.0)]
    static let west = [(10.0, 10.0), (11.0, 10.0), (11.0, 11.0), (10.0, 11.0), (10.0, 10.0)]
    static let east = [(12.0, 10.0), (13.0, 10.0), (13.0, 11.0), (12.0, 11.0), (12.0, 10.0)]

    static let points = [
        G.feature(#""id":"port","radius":1000,"group":"harbor","name":"North","berths":12"#, G.point(0.5, 0.25)),
        G.feature(#""id":"buoy","name":"no radius""#, G.point(1, 1)),
    ]
    static let zones = [
        G.feature(
            #""id":"yard","group":"depots","dwell":60,"actions":"enter,exit","expires":"2021-01-01T00:00:00Z""#,
            G.polygon([square, hole])),
        G.feature(#""id":"twin","coord":"gcj02""#, G.multiPolygon([[west], [east]])),
        G.feature(#""id":"bowtie""#, G.polygon([[(0, 0), (2, 2), (2, 0), (0, 2), (0, 0)]])),
        G.feature(#""id":"open""#, G.polygon([[(0, 0), (1, 0), (1, 1), (0, 1)]])),
        G.feature(#""id":"short""#, G.polygon([[(0, 0), (1, 0), (0, 0)]])),
    ]

    /// The oracle: the fences those features describe, written out by hand.
    static let expected: [Fence] = [
        Fence(id: "port", group: "harbor", shape: .circle(center: LonLat(lon: 0.5, lat: 0.25), radius: 1000)),
        Fence(
            id: "yard", group: "depots", shape: .polygons([Polygon(exterior: G.lonLats(square), holes: [G.lonLats(hole)])]),
            actions: [.enter, .exit], dwell: 60, expires: 1_609_459_200),
        Fence(
            id: "twin", shape: .polygons([Polygon(exterior: G.lonLats(west)), Polygon(exterior: G.lonLats(east))]), coord: .gcj02),
    ]

    /// Reads a source as the CLI does: the fences the store accepts, and the reader's refusals
    /// and the store's, in source order.
    static func load(_ source: String, _ options: FenceInputOptions = FenceInputOptions()) throws -> (FenceReadResult, [RejectedFeature]) {
        var read = try FenceInput.read(source, options: options)
        var store = FenceStore()
        let results = store.add(read.fences, threads: 1)
        let layerOrder = Dictionary(read.layers.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        let rejected = (read.rejected + read.rejections(from: results)).sorted {
            (layerOrder[$0.origin.layer]!, $0.origin.index) < (layerOrder[$1.origin.layer]!, $1.origin.index)
        }
        let kept = results.indices.filter { results[$0].error == nil }
        read.fences = kept.map { read.fences[$0] }
        read.origins = kept.map { read.origins[$0] }
        return (read, rejected)
    }

    /// A ring with its closing position dropped, started at its least vertex and turned
    /// counter-clockwise first: Shapefile rewrites ring orientation, the geometry stays.
    static func canonical(_ shape: FenceShape) -> FenceShape {
        guard case .polygons(let polygons) = shape else { return shape }
        func ring(_ r: [LonLat]) -> [LonLat] {
            guard r.count > 2, r.first == r.last else { return r }
            var open = Array(r.dropLast())
            let start = open.indices.min { (open[$0].lon, open[$0].lat) < (open[$1].lon, open[$1].lat) }!
            open = Array(open[start...] + open[..<start])
            let next = open[1]
            let previous = open[open.count - 1]
            if (previous.lon, previous.lat) < (next.lon, next.lat) { open = [open[0]] + open.dropFirst().reversed() }
            return open + [open[0]]
        }
        return .polygons(polygons.map { Polygon(exterior: ring($0.exterior), holes: $0.holes.map(ring)) })
    }

    /// Checks the loaded fences against the oracle and the refusals against their exact texts.
    func verify(
        _ source: String, layer: String, options: FenceInputOptions = FenceInputOptions(), firstIndex: Int = 1,
        openRing: String = "it starts at (0.0, 0.0) and ends at (0.0, 1.0)", textColumns: Bool = false,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let (read, rejected) = try Self.load(source, options)
        XCTAssertEqual(read.reader, .ogr, file: file, line: line)
        XCTAssertEqual(read.fences.map(\.id), Self.expected.map(\.id), file: file, line: line)
        for (got, want) in zip(read.fences, Self.expected) {
            XCTAssertEqual(Self.canonical(got.shape), Self.canonical(want.shape), "\(want.id)", file: file, line: line)
            XCTAssertEqual(got.group, want.group, "\(want.id)", file: file, line: line)
            XCTAssertEqual(got.coord, want.coord, "\(want.id)", file: file, line: line)
            XCTAssertEqual(got.actions, want.actions, "\(want.id)", file: file, line: line)
            XCTAssertEqual(got.dwell, want.dwell, "\(want.id)", file: file, line: line)
            XCTAssertEqual(got.expires, want.expires, "\(want.id)", file: file, line: line)
        }
        XCTAssertEqual(read.fences.first?.properties["name"], "\"North\"", file: file, line: line)
        XCTAssertEqual(read.fences.first?.properties["berths"], textColumns ? "\"12\"" : "12", file: file, line: line)
        XCTAssertNil(read.fences.first?.properties["radius"], "settings are not properties", file: file, line: line)
        XCTAssertTrue(read.origins.allSatisfy { $0.layer == layer }, "\(read.origins)", file: file, line: line)
        let texts = rejected.map { r -> String in
            var e = r.error
            e.line = nil
            return "\(r.origin.index): \(e)"
        }
        XCTAssertEqual(
            texts,
            [
                "\(firstIndex + 1): fence buoy: invalid-radius: a Point fence needs a radius in metres (field \"radius\")",
                "\(firstIndex + 4): fence bowtie: invalid-geometry: Self-intersection at (1.0, 1.0)",
                "\(firstIndex + 5): fence open: ring-not-closed: exterior ring is not closed: \(openRing)",
                "\(firstIndex + 6): fence short: ring-too-short: exterior ring has 3 positions; a ring needs at least 4",
            ], file: file, line: line)
        XCTAssertTrue(rejected.allSatisfy { $0.origin.layer == layer }, "\(rejected.map(\.origin.layer))", file: file, line: line)
    }

    /// One file of all seven features, converted to `driver`.
    func make(_ driver: String, _ name: String, _ options: [String] = []) throws -> String {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        let source = dir + "/fences.geojson"
        try G.write(G.collection(Self.points + Self.zones), to: source)
        let path = dir + "/" + name
        try G.convert(["-f", driver, path, source] + options)
        return path
    }

    func testGeoJSONThroughOGR() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        let source = dir + "/fences.geojson"
        try G.write(G.collection(Self.points + Self.zones), to: source)
        var options = FenceInputOptions()
        options.reader = .ogr
        try verify(source, layer: "fences", options: options)
        // The built-in reader loads the same fences and refuses the same features, in the same words.
        let (native, rejected) = try Self.load(source)
        XCTAssertEqual(native.reader, .native)
        XCTAssertEqual(native.fences.map(\.id), Self.expected.map(\.id))
        for (got, want) in zip(native.fences, Self.expected) { XCTAssertEqual(Fence(id: got.id, group: got.group, shape: got.shape, coord: got.coord, actions: got.actions, dwell: got.dwell, expires: got.expires), want) }
        XCTAssertEqual(rejected.map { "\($0)" }, [
            "layer fences, feature 2: fence buoy: invalid-radius: a Point fence needs a \"radius\" property in metres",
            "layer fences, feature 5: fence bowtie: invalid-geometry: Self-intersection at (1.0, 1.0)",
            "layer fences, feature 6: fence open: ring-not-closed: exterior ring is not closed: it starts at (0.0, 0.0) and ends at (0.0, 1.0)",
            "layer fences, feature 7: fence short: ring-too-short: exterior ring has 3 positions; a ring needs at least 4",
        ])
    }

    /// Through OGR when asked; the built-in reader (`auto`'s choice) loads the same fences
    /// and refuses the same features.
    func testGeoJSONSeq() throws {
        let path = try make("GeoJSONSeq", "fences.geojsonl")
        var options = FenceInputOptions()
        options.reader = .ogr
        try verify(path, layer: "fences", options: options)
        let (native, rejected) = try Self.load(path)
        XCTAssertEqual(native.reader, .native)
        XCTAssertEqual(native.layers, ["fences"])
        XCTAssertEqual(native.fences.map(\.id), Self.expected.map(\.id))
        for (got, want) in zip(native.fences, Self.expected) {
            XCTAssertEqual(Fence(id: got.id, group: got.group, shape: got.shape, coord: got.coord, actions: got.actions, dwell: got.dwell, expires: got.expires), want)
        }
        XCTAssertEqual(rejected.map { "\($0.origin.index) \($0.error.fence ?? "") \($0.error.kind.rawValue)" }, [
            "2 buoy invalid-radius", "5 bowtie invalid-geometry", "6 open ring-not-closed", "7 short ring-too-short",
        ])
    }

    func testGeoPackage() throws {
        let path = try make("GPKG", "fences.gpkg", ["-nln", "zones"])
        try verify(path, layer: "zones")
        // The exact report line, FID included (GeoPackage numbers features from 1).
        let (_, rejected) = try Self.load(path)
        XCTAssertEqual(
            "\(rejected[1])", "layer zones, feature 5 (FID 5): fence bowtie: invalid-geometry: Self-intersection at (1.0, 1.0)")
    }

    func testFlatGeobuf() throws {
        // Without the spatial index FlatGeobuf keeps the features in the order written.
        try verify(try make("FlatGeobuf", "fences.fgb", ["-lco", "SPATIAL_INDEX=NO"]), layer: "fences")
    }

    func testCSVWithWKT() throws {
        let path = try make("CSV", "fences.csv", ["-lco", "GEOMETRY=AS_WKT"])
        let header = try String(contentsOfFile: path, encoding: .utf8).prefix { $0 != "\n" }
        XCTAssertTrue(header.hasPrefix("WKT,"), String(header))
        // Every CSV column is text: numbers are read from it, and kept as strings.
        try verify(path, layer: "fences", textColumns: true)
    }

    /// A folder of Shapefiles is one source with a layer per file; Shapefile allows one geometry
    /// type per file and rewrites ring orientation (exterior clockwise).
    func testShapefileFolder() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        try G.write(G.collection(Self.points), to: dir + "/points.geojson")
        try G.write(G.collection(Self.zones), to: dir + "/zones.geojson")
        try FileManager.default.createDirectory(atPath: dir + "/shp", withIntermediateDirectories: true)
        try G.convert([dir + "/shp/points.shp", dir + "/points.geojson"])
        try G.convert([dir + "/shp/zones.shp", dir + "/zones.geojson"])
        var options = FenceInputOptions()
        options.layers = ["points", "zones"]
        let (read, rejected) = try Self.load(dir + "/shp", options)
        XCTAssertEqual(read.layers, ["points", "zones"])
        XCTAssertEqual(read.fences.map(\.id), Self.expected.map(\.id))
        for (got, want) in zip(read.fences, Self.expected) {
            XCTAssertEqual(Self.canonical(got.shape), Self.canonical(want.shape), want.id)
            XCTAssertEqual([got.group, got.coord.rawValue, got.actions?.list, got.dwell.map { "\($0)" }, got.expires.map { "\($0)" }],
                           [want.group, want.coord.rawValue, want.actions?.list, want.dwell.map { "\($0)" }, want.expires.map { "\($0)" }], want.id)
        }
        XCTAssertEqual(
            rejected.map { "\($0)" },
            [
                "layer points, feature 2 (FID 1): fence buoy: invalid-radius: a Point fence needs a radius in metres (field \"radius\")",
                "layer zones, feature 3 (FID 2): fence bowtie: invalid-geometry: Self-intersection at (1.0, 1.0)",
                "layer zones, feature 4 (FID 3): fence open: ring-not-closed: exterior ring is not closed: it starts at (0.0, 1.0) and ends at (0.0, 0.0)",
                "layer zones, feature 5 (FID 4): fence short: ring-too-short: exterior ring has 3 positions; a ring needs at least 4",
            ])
        // A layer that is not there is named with the ones that are.
        options.layers = ["nowhere"]
        XCTAssertThrowsError(try FenceInput.read(dir + "/shp", options: options)) { error in
            let reason = (error as? FenceError)?.reason ?? ""
            XCTAssertEqual(reason, "\(dir)/shp has no layer nowhere (layers: points, zones)")
        }
    }

    /// A folder's layers are read in name order (UTF-8 bytes), not in the file system's
    /// directory order, so that of fences sharing an id across files the same one is kept
    /// wherever the folder lies; each refused copy names where the kept one is (found by an
    /// audit: the fence kept, with its shape and group, was whichever file `readdir` listed
    /// first, and the refusal named only the copy).
    func testShapefileFolderIsReadInNameOrder() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        try FileManager.default.createDirectory(atPath: dir + "/shp", withIntermediateDirectories: true)
        // Made in an order that is not the names' (a directory lists by hash or by creation).
        let names = ["m", "z", "a", "q", "Z", "b2", "b10", "k", "\u{E9}t\u{E9}", "c"]
        for (n, name) in names.enumerated() {
            let square = [(Double(n), 0.0), (Double(n) + 1, 0), (Double(n) + 1, 1), (Double(n), 1), (Double(n), 0)]
            try G.write(G.collection([G.feature(#""id":"harbor","group":"\#(name)""#, G.polygon([square]))]), to: dir + "/src.geojson")
            try G.convert([dir + "/shp/\(name).shp", dir + "/src.geojson"])
        }
        let sorted = ["Z", "a", "b10", "b2", "c", "k", "m", "q", "z", "\u{E9}t\u{E9}"]
        let (read, rejected) = try Self.load(dir + "/shp")
        XCTAssertEqual(read.layers, sorted)
        XCTAssertEqual(read.fences.map(\.group), ["Z"])
        XCTAssertEqual(
            rejected.map { "\($0)" },
            sorted.dropFirst().map {
                "layer \($0), feature 1 (FID 0): fence harbor: duplicate-id: the id appears more than once in this batch; "
                    + "first in layer Z, feature 1 (FID 0)"
            })
        // Named layers are read in the order named.
        var options = FenceInputOptions()
        options.layers = ["q", "a"]
        XCTAssertEqual(try Self.load(dir + "/shp", options).0.fences.map(\.group), ["q"])
        // The built-in reader's repeats say the same.
        let square = G.polygon([[(0, 0), (1, 0), (1, 1), (0, 1), (0, 0)]])
        let doc = G.collection([G.feature(#""id":"x""#, square), G.feature(#""id":"y""#, square), G.feature(#""id":"x""#, square)])
        let native = try GeoJSONFences.read(Data(doc.utf8), layer: "d", options: FenceInputOptions())
        var store = FenceStore()
        XCTAssertEqual(
            native.rejections(from: store.add(native.fences, threads: 1)).map { "\($0)" },
            ["layer d, feature 3: fence x: duplicate-id: the id appears more than once in this batch; first in layer d, feature 1"])
        // A first copy refused itself keeps nothing: the repeats say so (a review found them
        // pointing at it as the kept one).
        let bowtie = G.polygon([[(0, 0), (2, 2), (2, 0), (0, 2), (0, 0)]])
        let broken = G.collection([G.feature(#""id":"x""#, bowtie), G.feature(#""id":"x""#, square)])
        let brokenRead = try GeoJSONFences.read(Data(broken.utf8), layer: "d", options: FenceInputOptions())
        var store2 = FenceStore()
        let said = brokenRead.rejections(from: store2.add(brokenRead.fences, threads: 1)).map { "\($0)" }
        XCTAssertEqual(said.count, 2)
        XCTAssertEqual(
            said.last,
            "layer d, feature 2: fence x: duplicate-id: the id appears more than once in this batch; first in layer d, feature 1, itself refused: invalid-geometry")
    }

    /// A feature without a usable geometry says which: an empty one, or none; in a CSV, none
    /// also covers WKT that OGR's CSV driver could not parse, which it drops without a word.
    func testMissingAndEmptyGeometriesAreToldApart() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        try G.write(
            "WKT,id\n\"POLYGON ((0 0,1 0,1 1,0 0))\",good\n\"POLYGON ((0 0,1 0\",broken\n\"POLYGON EMPTY\",empty\n,none\n",
            to: dir + "/f.csv")
        let (read, rejected) = try Self.load(dir + "/f.csv")
        XCTAssertEqual(read.fences.map(\.id), ["good"])
        let none = "the feature has no geometry: its WKT cell is empty or is not geometry OGR can read"
        XCTAssertEqual(rejected.map(\.error.fence), ["broken", "empty", "none"])
        XCTAssertEqual(rejected.map(\.error.reason), [none, "the feature's geometry is empty", none])
        XCTAssertTrue(rejected.allSatisfy { $0.error.kind == .emptyGeometry })
        // Outside a CSV, a null geometry is just none.
        try G.convert(["-f", "GeoJSON", dir + "/f.geojson", dir + "/f.csv", "-oo", "KEEP_GEOM_COLUMNS=NO"])
        var options = FenceInputOptions()
        options.reader = .ogr
        let (_, fromJSON) = try Self.load(dir + "/f.geojson", options)
        XCTAssertEqual(fromJSON.count, 3)
        XCTAssertEqual(fromJSON.first?.error.reason, "the feature has no geometry")
        XCTAssertEqual(fromJSON.last?.error.reason, "the feature has no geometry")
        // A CSV without a WKT column (positions given as fences, a user audit) says so.
        try G.write("device,time,lon,lat\na,0,1,2\nb,0,1,2\n", to: dir + "/p.csv")
        let (_, positions) = try Self.load(dir + "/p.csv")
        XCTAssertEqual(positions.map(\.error.reason), Array(repeating: "the CSV has no geometry column (fences need a WKT column)", count: 2))
    }

    /// Refused features past 100 are counted, not listed, outside `fence check`; a source
    /// none of whose features has a geometry gets a hint.
    func testCLIListsAHundredRefusedFeaturesThenCounts() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        try G.write("device,time,lon,lat\n" + (0..<250).map { "d\($0),\($0),1,2\n" }.joined(), to: dir + "/p.csv")
        let r = try CLI.run(["eval", "--fences", dir + "/p.csv", "--positions", dir + "/p.csv"])
        XCTAssertEqual(r.status, 1, r.err)
        let lines = r.err.split(separator: "\n")
        XCTAssertEqual(lines.filter { $0.contains("empty-geometry: the CSV has no geometry column") }.count, 100, r.err)
        XCTAssertTrue(r.err.contains("fence: \(dir)/p.csv: 150 more features refused (fence check lists every one)\n"), r.err)
        XCTAssertTrue(r.err.contains("no feature has a geometry: is it a fence file? (positions go in --positions)"), r.err)
        let check = try CLI.run(["check", "--fences", dir + "/p.csv"])
        XCTAssertEqual(check.out.split(separator: "\n").filter { $0.contains("no geometry column") }.count + check.err.split(separator: "\n").filter { $0.contains("no geometry column") }.count, 250, check.out + check.err)
    }

    func testUnreadableSourceIsRefusedWithGDALsReason() throws {
        let dir = try G.folder(self)
        try G.write("not a vector file", to: dir + "/x.gpkg")
        XCTAssertThrowsError(try FenceInput.read(dir + "/x.gpkg")) { error in
            let e = error as? FenceError
            XCTAssertEqual(e?.kind, .malformedInput)
            XCTAssertTrue(e?.reason.hasPrefix("cannot open \(dir)/x.gpkg as vector data: ") == true, e?.reason ?? "")
        }
        XCTAssertEqual(
            FenceInput.displayName("PG:host=db password=s3cret dbname=fences"), "PG:host=db password=*** dbname=fences")
        XCTAssertEqual(FenceInput.displayName("PG:password='a b' host=db"), "PG:password=*** host=db")
        // Found by an audit: URIs, keywords with blanks around `=`, quotes with escapes, and
        // every occurrence.
        let masked = [
            "postgresql://u:s3cr3t@127.0.0.1:1/x": "postgresql://u:***@127.0.0.1:1/x",
            "PG:postgresql://u:s3cr3t@host/db?sslmode=require": "PG:postgresql://u:***@host/db?sslmode=require",
            "PG:postgres://user@host/db?password=s3cr3t&sslmode=require": "PG:postgres://user@host/db?password=***&sslmode=require",
            "PG:host=db password = s3cr3t dbname=f": "PG:host=db password = *** dbname=f",
            #"PG:password='it\'s secret' host=db"#: "PG:password=*** host=db",
            "PG:PASSWORD=a host=db password=b": "PG:PASSWORD=*** host=db password=***",
            "PG:host=db user=u": "PG:host=db user=u",
            "/data/passwords/zones.gpkg": "/data/passwords/zones.gpkg",
            "/data/oldpassword=1.gpkg": "/data/oldpassword=1.gpkg",
            "https://example.com/zones.geojson": "https://example.com/zones.geojson",
            "/vsicurl/https://u:p@example.com/z.fgb": "/vsicurl/https://u:***@example.com/z.fgb",
        ]
        for (source, shown) in masked { XCTAssertEqual(FenceInput.displayName(source), shown, source) }
    }

    /// Curves are made straight by OGR and Z / M dropped before the WKB goes to GEOS; types
    /// that cannot be fences are refused by name.
    func testCurvesAndZAreFlattenedOtherTypesRefused() throws {
        let dir = try G.folder(self)
        try G.write(
            """
            id,radius,WKT
            disc,,"CURVEPOLYGON (CIRCULARSTRING (0 0,2 0,0 0))"
            high,,"POLYGON ZM ((0 0 5 1,1 0 5 1,1 1 5 1,0 0 5 1))"
            path,,"LINESTRING (0 0,1 1)"
            pins,3,"MULTIPOINT ((0 0),(1 1))"

            """, to: dir + "/odd.csv")
        let (read, rejected) = try Self.load(dir + "/odd.csv")
        XCTAssertEqual(read.fences.map(\.id), ["disc", "high"])
        guard case .polygons(let disc) = read.fences[0].shape else { return XCTFail("disc is no polygon") }
        XCTAssertGreaterThan(disc[0].exterior.count, 16, "a circle made of many straight edges")
        XCTAssertEqual(read.fences[1].shape, .polygons([Polygon(exterior: G.lonLats([(0, 0), (1, 0), (1, 1), (0, 0)]))]))
        var store = FenceStore()
        store.add(read.fences)
        XCTAssertEqual(store.ids(covering: LonLat(lon: 1.5, lat: 0.5)), ["disc"])
        XCTAssertEqual(store.ids(covering: LonLat(lon: 2.5, lat: 0)), [])
        XCTAssertEqual(
            rejected.map { "\($0)" },
            [
                "layer odd, feature 3 (FID 3): fence path: malformed-input: geometry type LineString cannot be a fence (Polygon, MultiPolygon or Point with radius)",
                "layer odd, feature 4 (FID 4): fence pins: malformed-input: geometry type MultiPoint cannot be a fence (Polygon, MultiPolygon or Point with radius)",
            ])
    }
}
