import FenceEngine
@testable import FenceIO
import XCTest

/// Settings read from columns named by the user: the library's `FenceFields` and the CLI's
/// --id-field ... --expires-field on every command that takes --fences.
final class FieldMappingTests: XCTestCase {
    typealias G = GDALFixtures

    static let features = [
        G.feature(
            #""name":"north","zone":"harbor","r":500,"sys":"gcj02","events":["enter","dwell"],"stay":30,"until":"2021-01-01T00:00:00Z","id":"ignored-id""#,
            G.point(0, 0)),
        G.feature(#""name":"yard","zone":"depots","stay":"45""#, G.polygon([[(0.02, 0), (0.04, 0), (0.04, 0.02), (0.02, 0.02), (0.02, 0)]])),
        G.feature(#""zone":"nameless","r":5"#, G.point(1, 1)),
    ]

    static var mapped: FenceInputOptions {
        var o = FenceInputOptions()
        o.fields.set(.id, to: "name")
        o.fields.set(.group, to: "zone")
        o.fields.set(.radius, to: "r")
        o.fields.set(.coord, to: "sys")
        o.fields.set(.actions, to: "events")
        o.fields.set(.dwell, to: "stay")
        o.fields.set(.expires, to: "until")
        return o
    }

    static let expected = [
        Fence(
            id: "north", group: "harbor", shape: .circle(center: LonLat(lon: 0, lat: 0), radius: 500), coord: .gcj02,
            actions: [.enter, .dwell], dwell: 30, expires: 1_609_459_200, properties: ["id": "\"ignored-id\""]),
        Fence(
            id: "yard", group: "depots",
            shape: .polygons([Polygon(exterior: G.lonLats([(0.02, 0), (0.04, 0), (0.04, 0.02), (0.02, 0.02), (0.02, 0)]))]), dwell: 45),
    ]

    func testBuiltInReaderFollowsTheMapping() throws {
        let read = try GeoJSONFences.read(Data(G.collection(Self.features).utf8), layer: "z", options: Self.mapped)
        XCTAssertEqual(read.fences, Self.expected)
        XCTAssertEqual(read.rejected.map { "\($0)" }, ["layer z, feature 3: fence #3: missing-id: the feature has no id (property \"name\")"])
    }

    func testOGRFollowsTheMappingWhateverTheCase() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        try G.write(G.collection(Self.features), to: dir + "/z.geojson")
        try G.convert([dir + "/z.gpkg", dir + "/z.geojson"])
        let read = try FenceInput.read(dir + "/z.gpkg", options: Self.mapped)
        XCTAssertEqual(read.fences.count, 2)
        for (got, want) in zip(read.fences, Self.expected) {
            XCTAssertEqual(Fence(id: got.id, group: got.group, shape: got.shape, coord: got.coord, actions: got.actions, dwell: got.dwell, expires: got.expires), Fence(id: want.id, group: want.group, shape: want.shape, coord: want.coord, actions: want.actions, dwell: want.dwell, expires: want.expires))
        }
        XCTAssertEqual(read.fences[0].properties["id"], "\"ignored-id\"")
        XCTAssertEqual(read.rejected.map { "\($0)" }, ["layer z, feature 3 (FID 3): fence #3: missing-id: the feature's id (field \"name\") is empty"])
        // Column names match case-insensitively (Shapefile and CSV headers are often upper case).
        try G.write("NAME,R,WKT\nbuoy,12.5,\"POINT (3 4)\"\n", to: dir + "/upper.csv")
        var options = FenceInputOptions()
        options.fields.set(.id, to: "name")
        options.fields.set(.radius, to: "r")
        XCTAssertEqual(try FenceInput.read(dir + "/upper.csv", options: options).fences, [
            Fence(id: "buoy", shape: .circle(center: LonLat(lon: 3, lat: 4), radius: 12.5)),
        ])
        // A named column the layer lacks refuses the layer, naming what it has.
        options.fields.set(.dwell, to: "stay_s")
        XCTAssertThrowsError(try FenceInput.read(dir + "/upper.csv", options: options)) { error in
            XCTAssertEqual((error as? FenceError)?.reason, "layer upper has no field \"stay_s\" (named for the dwell); its fields: NAME, R")
        }
    }

    func testDefaultsTakeTheAlternativeNames() throws {
        let doc = G.collection([G.feature(#""id":"a","customID":"fleet","coordType":"bd09ll","radius":"7""#, G.point(116.4, 39.9))])
        let read = try GeoJSONFences.read(Data(doc.utf8), layer: "d", options: FenceInputOptions())
        XCTAssertEqual(read.fences, [Fence(id: "a", group: "fleet", shape: .circle(center: LonLat(lon: 116.4, lat: 39.9), radius: 7), coord: .bd09ll)])
    }

    /// A layer whose features name a setting by either default name has both columns, each
    /// null where a feature used the other: each feature takes the first it has set, as the
    /// built-in reader takes the first property a feature has (found by an audit: OGR took
    /// the first column only, losing `customID` groups and reading `coordType` shapes as WGS84).
    func testOGRTakesEachFeaturesFirstSetColumnOfTheDefaultNames() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        let doc = G.collection([
            G.feature(#""id":"a","group":"fleet","coord":"gcj02","radius":7"#, G.point(116.4, 39.9)),
            G.feature(#""id":"b","customID":"depots","coordType":"bd09ll","radius":9"#, G.point(116.5, 39.8)),
            G.feature(#""id":"c","group":"first","customID":"second","radius":5"#, G.point(116.6, 39.7)),
            G.feature(#""id":"d","radius":4"#, G.point(116.7, 39.6)),
        ])
        try G.write(doc, to: dir + "/alt.geojson")
        try G.convert([dir + "/alt.gpkg", dir + "/alt.geojson"])
        let builtIn = try GeoJSONFences.read(Data(doc.utf8), layer: "alt", options: FenceInputOptions())
        XCTAssertEqual(builtIn.fences.map(\.group), ["fleet", "depots", "first", nil])
        XCTAssertEqual(builtIn.fences.map(\.coord), [.gcj02, .bd09ll, .wgs84, .wgs84])
        for source in [dir + "/alt.gpkg", dir + "/alt.geojson"] {
            var options = FenceInputOptions()
            options.reader = .ogr
            let read = try FenceInput.read(source, options: options)
            XCTAssertEqual(read.fences.map(\.id), ["a", "b", "c", "d"], source)
            XCTAssertEqual(read.fences.map(\.group), builtIn.fences.map(\.group), source)
            XCTAssertEqual(read.fences.map(\.coord), builtIn.fences.map(\.coord), source)
            XCTAssertEqual(read.fences.map(\.shape), builtIn.fences.map(\.shape), source)
            XCTAssertTrue(read.fences.allSatisfy { $0.properties.isEmpty }, "settings are no properties: \(read.fences.map(\.properties))")
        }
    }

    /// Integer columns are read as integers: an id or group is the column's digits, as the
    /// built-in reader keeps a JSON number's text (found by an audit: they went through a
    /// `Double`, so H3 cells 617700169958293503 and ...504 became one id
    /// `6.177001699582935e+17` and the second fence was refused as a duplicate; 2^53 + 1 came
    /// out `9007199254740992.0`). Numeric settings from Integer and Integer64 columns still
    /// take their values.
    func testOGRReadsIntegerColumnsExactly() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        // OGR types `h3`, `grp`, `stay` and `until` Integer64 (values past 32 bits), `r` Integer.
        let doc = G.collection([
            G.feature(#""h3":617700169958293503,"grp":9007199254740995,"r":250,"stay":5000000000,"until":4102444800"#, G.point(1, 1)),
            G.feature(#""h3":617700169958293504,"grp":9007199254740993,"r":300,"stay":60,"until":1"#, G.point(2, 2)),
            G.feature(#""h3":-9223372036854775807,"grp":-7,"r":7,"stay":0,"until":0"#, G.point(3, 3)),
        ])
        try G.write(doc, to: dir + "/h3.geojson")
        try G.convert([dir + "/h3.gpkg", dir + "/h3.geojson"])
        var options = FenceInputOptions()
        options.reader = .ogr
        options.fields.set(.id, to: "h3")
        options.fields.set(.group, to: "grp")
        options.fields.set(.radius, to: "r")
        options.fields.set(.dwell, to: "stay")
        options.fields.set(.expires, to: "until")
        let builtIn = try GeoJSONFences.read(Data(doc.utf8), layer: "h3", options: options)
        XCTAssertEqual(builtIn.fences.map(\.id), ["617700169958293503", "617700169958293504", "-9223372036854775807"])
        for source in [dir + "/h3.geojson", dir + "/h3.gpkg"] {
            let read = try FenceInput.read(source, options: options)
            XCTAssertEqual(read.rejected, [], source)
            XCTAssertEqual(read.fences.map(\.id), builtIn.fences.map(\.id), source)
            XCTAssertEqual(read.fences.map(\.group), ["9007199254740995", "9007199254740993", "-7"], source)
            XCTAssertEqual(read.fences.map(\.group), builtIn.fences.map(\.group), source)
            XCTAssertEqual(read.fences.map(\.shape), builtIn.fences.map(\.shape), source)
            XCTAssertEqual(read.fences.map(\.dwell), [5_000_000_000, 60, 0], source)
            XCTAssertEqual(read.fences.map(\.expires), [4_102_444_800, 1, 0], source)
        }
        // An Integer (32-bit) column as the id: its digits, no fraction.
        options.fields.set(.id, to: "r")
        XCTAssertEqual(try FenceInput.read(dir + "/h3.gpkg", options: options).fences.map(\.id), ["250", "300", "7"])
    }

    /// A column named exactly as a setting wins over one that matches it only ignoring case,
    /// as the built-in reader reads only the exact property; the other is a property (found by
    /// an audit: OGR took the first column matching ignoring case, so columns `ID` (17) and
    /// `id` ("depot-1") named the fence `17`, and a GeoJSONSeq whose first feature had
    /// `Radius` refused every feature with `radius`). Two columns that match only ignoring
    /// case refuse the layer, naming both; naming one exactly reads it.
    func testOGRPrefersTheExactCaseColumn() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        let features = [
            G.feature(#""ID":17,"id":"depot-1","radius":250"#, G.point(4, 52)),
            G.feature(#""ID":18,"id":"depot-2","radius":300"#, G.point(4.1, 52)),
        ]
        try G.write(G.collection(features), to: dir + "/ids.geojson")
        let builtIn = try GeoJSONFences.read(Data(G.collection(features).utf8), layer: "ids", options: FenceInputOptions())
        XCTAssertEqual(builtIn.fences.map(\.id), ["depot-1", "depot-2"])
        var ogr = FenceInputOptions()
        ogr.reader = .ogr
        XCTAssertEqual(try FenceInput.read(dir + "/ids.geojson", options: ogr).fences, builtIn.fences)
        try G.write("ID,id,WKT\n17,depot-1,\"POLYGON ((0 0,1 0,1 1,0 1,0 0))\"\n", to: dir + "/ids.csv")
        let csv = try FenceInput.read(dir + "/ids.csv", options: ogr)
        XCTAssertEqual(csv.fences.map(\.id), ["depot-1"])
        XCTAssertEqual(csv.fences.map(\.properties), [["ID": "\"17\""]])

        // One feature spells `Radius`: it alone lacks a `radius`, in both readers.
        let seq = [
            G.feature(#""id":"a","Radius":250"#, G.point(4, 52)),
            G.feature(#""id":"b","radius":300"#, G.point(4.1, 52)),
            G.feature(#""id":"c","radius":400"#, G.point(4.2, 52)),
        ]
        try G.write(seq.joined(separator: "\n") + "\n", to: dir + "/seq.geojsonl")
        let seqBuiltIn = try GeoJSONFences.read(Data(G.collection(seq).utf8), layer: "seq", options: FenceInputOptions())
        let seqOGR = try FenceInput.read(dir + "/seq.geojsonl", options: ogr)
        XCTAssertEqual(seqOGR.fences, seqBuiltIn.fences)
        XCTAssertEqual(seqOGR.fences.map(\.id), ["b", "c"])
        XCTAssertEqual(
            seqOGR.rejected.map { "\($0)" },
            ["layer seq, feature 1 (FID 0): fence a: invalid-radius: a Point fence needs a radius in metres (field \"radius\")"])

        // Two columns that match only ignoring case: refused, naming both; an exact name reads one.
        try G.write("id,Radius,RADIUS,WKT\np,5,7,\"POINT (1 1)\"\n", to: dir + "/two.csv")
        XCTAssertThrowsError(try FenceInput.read(dir + "/two.csv", options: ogr)) { error in
            XCTAssertEqual(
                (error as? FenceError)?.reason,
                "layer two has fields \"Radius\" and \"RADIUS\" for the radius (\"radius\"), which differ only in case: "
                    + "name the one to read exactly (--radius-field)")
        }
        var named = ogr
        named.fields.set(.radius, to: "RADIUS")
        XCTAssertEqual(
            try FenceInput.read(dir + "/two.csv", options: named).fences,
            [Fence(id: "p", shape: .circle(center: LonLat(lon: 1, lat: 1), radius: 7), properties: ["Radius": "\"5\""])])
        let cli = try CLI.run(["check", "--fences", dir + "/two.csv"])
        XCTAssertEqual(cli.status, 1)
        XCTAssertTrue(cli.err.contains("fields \"Radius\" and \"RADIUS\" for the radius"), cli.err)
    }

    /// A null or blank first name is not set: the feature takes the next name it has, for
    /// every role, as OGR reads a null or empty column (found by an audit: the built-in reader
    /// stopped at the null, loading `"coord": null, "coordType": "gcj02"` as WGS84, 500 m off
    /// in Beijing, and losing `customID` groups).
    func testANullOrBlankFirstNameFallsThroughToTheNext() throws {
        let square = G.polygon([[(116.39, 39.90), (116.40, 39.90), (116.40, 39.91), (116.39, 39.91), (116.39, 39.90)]])
        let doc = G.collection([
            G.feature(#""id":"a","group":null,"customID":"cid","coord":null,"coordType":"gcj02""#, square),
            G.feature(#""id":"b","group":"","customID":"cid2","coord":"","coordType":"bd09ll""#, square),
            G.feature(#""id":"c","group":" \t","customID":"cid3","coord":"  ","coordType":"gcj02""#, square),
            G.feature(#""id":"d","group":null,"coord":null"#, square),
            G.feature(#""id":"e","group":"g","customID":"ignored","coord":"wgs84","coordType":"gcj02""#, square),
        ])
        let read = try GeoJSONFences.read(Data(doc.utf8), layer: "n", options: FenceInputOptions())
        XCTAssertEqual(read.rejected, [])
        XCTAssertEqual(read.fences.map(\.id), ["a", "b", "c", "d", "e"])
        XCTAssertEqual(read.fences.map(\.group), ["cid", "cid2", "cid3", nil, "g"])
        XCTAssertEqual(read.fences.map(\.coord), [.gcj02, .bd09ll, .gcj02, .wgs84, .wgs84])
        XCTAssertTrue(read.fences.allSatisfy { $0.properties.isEmpty }, "\(read.fences.map(\.properties))")

        // A null or blank id property leaves the feature id.
        let ids = G.collection([
            #"{"type":"Feature","id":"f1","properties":{"id":null},"geometry":\#(square)}"#,
            #"{"type":"Feature","id":7,"properties":{"id":" "},"geometry":\#(square)}"#,
        ])
        XCTAssertEqual(try GeoJSONFences.read(Data(ids.utf8), layer: "n", options: FenceInputOptions()).fences.map(\.id), ["f1", "7"])

        // Every role, with two names of the library's own choosing.
        var options = FenceInputOptions()
        for role in FenceFields.Role.allCases { options.fields[role] = [role.rawValue, role.rawValue + "2"] }
        let point = G.point(116.4, 39.9)
        let all = G.collection([
            G.feature(
                #""id":null,"id2":"p","group":"","group2":"g","radius":null,"radius2":30,"coord":"","coord2":"gcj02","#
                    + #""actions":null,"actions2":["exit"],"dwell":" ","dwell2":60,"expires":null,"expires2":"2030-01-01T00:00:00Z""#,
                point),
        ])
        let every = try GeoJSONFences.read(Data(all.utf8), layer: "n", options: options)
        XCTAssertEqual(every.rejected, [])
        XCTAssertEqual(every.fences, [
            Fence(
                id: "p", group: "g", shape: .circle(center: LonLat(lon: 116.4, lat: 39.9), radius: 30), coord: .gcj02, actions: [.exit],
                dwell: 60, expires: 1_893_456_000),
        ])
    }

    /// The same file through OGR: the built-in reader gives the same settings.
    func testNullFirstNameReadsAsThroughOGR() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        let square = G.polygon([[(116.39, 39.90), (116.40, 39.90), (116.40, 39.91), (116.39, 39.91), (116.39, 39.90)]])
        let doc = G.collection([
            G.feature(#""id":"a","group":null,"customID":"cid","coord":null,"coordType":"gcj02""#, square),
            G.feature(#""id":"b","group":"","customID":"cid2","coord":"","coordType":"bd09ll""#, square),
            G.feature(#""id":"c","group":" \t","customID":"cid3","coord":"  ","coordType":"gcj02""#, square),
            G.feature(#""id":"d","group":null,"customID":null,"coord":null,"coordType":null"#, square),
        ])
        try G.write(doc, to: dir + "/n.geojson")
        var options = FenceInputOptions()
        options.reader = .ogr
        let throughOGR = try FenceInput.read(dir + "/n.geojson", options: options)
        let builtIn = try GeoJSONFences.read(Data(doc.utf8), layer: "n", options: FenceInputOptions())
        XCTAssertEqual(throughOGR.fences.map(\.group), ["cid", "cid2", "cid3", nil])
        XCTAssertEqual(throughOGR.fences.map(\.coord), [.gcj02, .bd09ll, .gcj02, .wgs84])
        XCTAssertEqual(builtIn.fences, throughOGR.fences)
    }

    /// Every command that takes --fences takes the mapping, with the same meaning.
    func testEveryCommandTakesTheFieldOptions() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        try G.write(G.collection(Self.features), to: dir + "/z.geojson")
        try G.convert([dir + "/z.gpkg", dir + "/z.geojson"])
        let mapping = [
            "--id-field", "name", "--group-field", "zone", "--radius-field", "r", "--coord-field", "sys", "--actions-field", "events",
            "--dwell-field", "stay", "--expires-field", "until",
        ]
        let refusal = "fence: \(dir)/z.gpkg: layer z, feature 3 (FID 3): fence #3: missing-id: the feature's id (field \"name\") is empty\n"
        for source in [dir + "/z.gpkg", dir + "/z.geojson"] {
            let contains = try CLI.run(["contains", "--fences", source, "--positions", "-"] + mapping, stdin: "device,time,lon,lat\nv,0,0.03,0.01\n")
            XCTAssertEqual(contains.out, "v,1970-01-01T00:00:00.000Z,yard\n", source)
            XCTAssertEqual(contains.status, 1, "a refused feature makes the status 1")
            let nearest = try CLI.run(["nearest", "--fences", source, "--positions", "-"] + mapping, stdin: "device,time,lon,lat\nv,0,0.03,0.01\n")
            XCTAssertTrue(nearest.out.contains("v,1970-01-01T00:00:00.000Z,yard,-"), nearest.out)
            let eval = try CLI.run(
                ["eval", "--fences", source, "--positions", "-", "--properties", "id"] + mapping, stdin: "device,time,lon,lat\nv,0,0.03,0.01\n")
            XCTAssertEqual(
                eval.out,
                #"{"time":"1970-01-01T00:00:00.000Z","device":"v","fence":"yard","group":"depots","event":"enter","lon":0.03,"lat":0.01,"initial":true,"properties":{}}"#
                    + "\n", source)
            let check = try CLI.run(["check", "--fences", source] + mapping)
            XCTAssertEqual(check.status, 1)
            XCTAssertTrue(check.err.contains("3 features in 1 layer"), check.err)
            if source.hasSuffix(".gpkg") {
                XCTAssertEqual(contains.err.prefix(refusal.count), Substring(refusal))
                XCTAssertEqual(check.out, "\(dir)/z.gpkg: layer z, feature 3 (FID 3): fence #3: missing-id: the feature's id (field \"name\") is empty\n")
            }
        }
        // Bad option values are usage errors (status 2).
        XCTAssertEqual(try CLI.run(["check", "--fences", dir + "/z.gpkg", "--fence-reader", "gdal"]).status, 2)
        XCTAssertEqual(try CLI.run(["check", "--fences", dir + "/z.gpkg", "--open-option", "NOEQUALS"]).status, 2)
        XCTAssertEqual(try CLI.run(["check", "--fences", dir + "/z.gpkg", "--max-fence-positions", "3"]).status, 2)
        // An option the driver does not have, or a value not of its type, is refused (GDAL
        // warned and read on without it).
        for option in ["NO_SUCH_OPTION=1", "LIST_ALL_TABLES=maybe"] {
            let r = try CLI.run(["check", "--fences", dir + "/z.gpkg", "--open-option", option])
            XCTAssertEqual(r.status, 1, option)
            XCTAssertTrue(r.err.contains("fence: \(dir)/z.gpkg: invalid-setting: --open-option not taken: "), r.err)
            XCTAssertTrue(r.err.contains("open option"), r.err)
        }
        let valid = try CLI.run(["check", "--fences", dir + "/z.gpkg", "--open-option", "LIST_ALL_TABLES=YES"] + mapping)
        XCTAssertFalse(valid.err.contains("open option"), valid.err)
        XCTAssertTrue(valid.err.contains("3 features in 1 layer"), valid.err)
        // A missing named column is bad input (status 1) with the reason.
        let missing = try CLI.run(["check", "--fences", dir + "/z.gpkg", "--id-field", "nope"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.err.hasPrefix("fence: \(dir)/z.gpkg: malformed-input: layer z has no field \"nope\" (named for the id); its fields: "), missing.err)
    }

    /// Text that is not UTF-8 in a column OGR reads (a Latin-1 CSV: the CSV driver does not
    /// recode) refuses its feature, naming the field: it was repaired to U+FFFD, so "café" and
    /// "cafè" in Latin-1 became one id. A Shapefile whose .cpg names its encoding is recoded by
    /// GDAL and reads as it should.
    func testTextThatIsNotUTF8IsRefusedNotRepaired() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        let csv = dir + "/latin.csv"
        try Data([UInt8]("id,radius,WKT\ncaf".utf8) + [0xE9] + [UInt8](",100,\"POINT (1 1)\"\nok,100,\"POINT (2 2)\"\n".utf8))
            .write(to: URL(fileURLWithPath: csv))
        let r = try CLI.run(["check", "--fences", csv])
        XCTAssertEqual(r.status, 1, r.out + r.err)
        XCTAssertTrue(r.out.contains("field \"id\" holds text that is not UTF-8"), r.out)
        XCTAssertTrue(r.err.contains("1 good fence"), r.err)
        try G.convert(["-f", "ESRI Shapefile", dir + "/latin_shp", csv, "-lco", "ENCODING=ISO-8859-1"])
        let shp = try CLI.run(["contains", "--fences", dir + "/latin_shp", "--positions", "-"], stdin: "device,time,lon,lat\nv,0,1,1\n")
        XCTAssertEqual(shp.status, 0, shp.err)
        XCTAssertEqual(shp.out, "v,1970-01-01T00:00:00.000Z,caf\u{E9}\n")
    }

    /// --layer, --open-option and --fence-crs reach OGR.
    func testLayerOpenOptionAndAssumedCRSOptions() throws {
        try G.requireOgr2ogr()
        let dir = try G.folder(self)
        // A CSV whose geometry column is not called WKT, in UTM 32N without a declared CRS.
        try G.write("id,radius,shape\npin,100,\"POINT (500000 0)\"\n", to: dir + "/pins.csv")
        let r = try CLI.run(
            ["contains", "--fences", dir + "/pins.csv", "--layer", "pins", "--open-option", "GEOM_POSSIBLE_NAMES=shape", "--fence-crs", "EPSG:32632", "--positions", "-"],
            stdin: "device,time,lon,lat\nv,0,9.0005,0\nw,0,9.01,0\n")
        XCTAssertEqual(r.out, "v,1970-01-01T00:00:00.000Z,pin\nw,1970-01-01T00:00:00.000Z,\n", r.err)
        XCTAssertEqual(r.status, 0, r.err)
        let wrongLayer = try CLI.run(["check", "--fences", dir + "/pins.csv", "--layer", "other"])
        XCTAssertEqual(wrongLayer.status, 1)
        XCTAssertEqual(wrongLayer.err, "fence: \(dir)/pins.csv: malformed-input: \(dir)/pins.csv has no layer other (layers: pins)\n")
    }

    /// `--layer`, `--fence-crs` and `--open-option` are checked whatever reads the source: the
    /// built-in GeoJSON reader ignored a `--layer` it does not have, a `--fence-crs` typo was
    /// noticed only if some layer lacked a CRS (found by an outside audit), and an open option
    /// or a CRS no layer took was ignored without a word (found by a README audit).
    func testLayerAndAssumedCRSAreCheckedForGeoJSONToo() throws {
        let fences = try CLI.temp(self, "pins.geojson", CLI.fences)
        let wrong = try CLI.run(["check", "--fences", fences, "--layer", "other"])
        XCTAssertEqual(wrong.status, 1)
        XCTAssertTrue(wrong.err.contains("has no layer other (layers: pins)"), wrong.err)
        XCTAssertEqual(try CLI.run(["check", "--fences", fences, "--layer", "pins"]).status, 0)
        // A CRS GDAL cannot read is a usage error, before the source is opened.
        let crs = try CLI.run(["check", "--fences", fences + ".missing", "--fence-crs", "EPSG:999999999"])
        XCTAssertEqual(crs.status, 2)
        XCTAssertTrue(crs.err.hasPrefix("fence: --fence-crs: unknown CRS EPSG:999999999: "), crs.err)
        XCTAssertTrue(crs.err.contains("Run `fence check --help`"), crs.err)
        let unused = try CLI.run(["check", "--fences", fences, "--fence-crs", "EPSG:32632"])
        XCTAssertEqual(unused.status, 1)
        XCTAssertEqual(
            unused.err,
            "fence: \(fences): invalid-setting: --fence-crs EPSG:32632 not taken: it is for layers that declare no CRS, "
                + "and every layer read declares one (GeoJSON is WGS84 longitude/latitude unless its \"crs\" member says otherwise)\n")
        XCTAssertEqual(unused.out, "", "nothing is checked")
        let option = try CLI.run(["check", "--fences", fences, "--open-option", "FOO=1"])
        XCTAssertEqual(option.status, 1)
        XCTAssertTrue(option.err.contains("fence: \(fences): invalid-setting: --open-option not taken: the built-in GeoJSON reader"), option.err)
        // Through OGR the driver judges the option, and GeoJSON declares its CRS there too.
        let throughOGR = try CLI.run(["check", "--fences", fences, "--fence-reader", "ogr", "--fence-crs", "EPSG:32632"])
        XCTAssertEqual(throughOGR.status, 1)
        XCTAssertTrue(throughOGR.err.contains("--fence-crs EPSG:32632 not taken"), throughOGR.err)
    }

    /// GeoJSON whose features have no id at all (as `ogr2ogr` writes it): every feature is
    /// refused by the built-in reader, and the commands say once how to load it; both ways do.
    /// A file where some feature has an id gets no such line.
    func testAFileWithoutAnyIdSaysHowToLoadIt() throws {
        let square = #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}"#
        let path = try CLI.temp(self, "noids.geojson", """
            {"type":"FeatureCollection","features":[
            {"type":"Feature","properties":{"name":"yard"},"geometry":\(square)},
            {"type":"Feature","properties":{"name":"dock","radius":100},"geometry":{"type":"Point","coordinates":[5,5]}}
            ]}
            """)
        let hint = "fence: \(path): no feature has an id: name the property that holds one with --id-field NAME, "
            + "or read the file through OGR (--fence-reader ogr), which numbers the features\n"
        let check = try CLI.run(["check", "--fences", path])
        XCTAssertEqual(check.status, 1)
        XCTAssertEqual(check.out.split(separator: "\n").count, 2, check.out)
        XCTAssertTrue(check.err.hasPrefix(hint), check.err)
        let contains = try CLI.run(["contains", "--fences", path, "--positions", "-"], stdin: "device,time,lon,lat\nv,0,0.5,0.5\n")
        XCTAssertEqual(contains.status, 1)
        XCTAssertTrue(contains.err.contains(hint), contains.err)
        // Either way out loads both fences.
        let named = try CLI.run(["contains", "--fences", path, "--positions", "-", "--id-field", "name"], stdin: "device,time,lon,lat\nv,0,0.5,0.5\n")
        XCTAssertEqual(named.status, 0, named.err)
        XCTAssertEqual(named.out, "v,1970-01-01T00:00:00.000Z,yard\n")
        let ogr = try CLI.run(["check", "--fences", path, "--fence-reader", "ogr"])
        XCTAssertEqual(ogr.status, 0, ogr.err)
        XCTAssertTrue(ogr.err.contains("2 good fences"), ogr.err)
        // One feature with an id: the other's refusal is a mistake in the file, not a file
        // without ids.
        let mixed = try CLI.temp(self, "mixed.geojson", """
            {"type":"FeatureCollection","features":[
            {"type":"Feature","id":"a","properties":{},"geometry":\(square)},
            {"type":"Feature","properties":{},"geometry":\(square)}
            ]}
            """)
        let one = try CLI.run(["check", "--fences", mixed])
        XCTAssertEqual(one.status, 1)
        XCTAssertFalse(one.err.contains("no feature has an id"), one.err)
    }
}
