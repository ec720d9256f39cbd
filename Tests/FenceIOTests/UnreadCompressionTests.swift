import Foundation
import XCTest

/// Inputs in compressed or archive formats that are not read (xz, bzip2, zip, ...): positions
/// (file, standard input), GeoJSON fences (a `.geojson` file, standard input) and a source
/// left to OGR are refused with the format's name and the command that decompresses it, not
/// as binary data or an unrecognised source (from a README audit).
final class UnreadCompressionTests: XCTestCase {
    /// Files of each format, made by the system's programs where installed, plus the magic
    /// bytes of the others in front of text.
    func samples(of text: String) throws -> [(format: String, data: Data)] {
        var out: [(String, Data)] = []
        for (format, program, args) in [("xz", "xz", ["-c"]), ("bzip2", "bzip2", ["-c"]), ("lzma", "xz", ["-c", "--format=lzma"])] {
            guard let path = ["/usr/bin/", "/bin/"].map({ $0 + program }).first(where: { FileManager.default.isExecutableFile(atPath: $0) })
            else { continue }
            let bytes = try CompressedInputTests.filter(Data(text.utf8), through: path, args)
            out.append((format, bytes))
        }
        let magics: [(String, [UInt8])] = [
            ("xz", [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]), ("lz4", [0x04, 0x22, 0x4D, 0x18]), ("lzip", Array("LZIP".utf8) + [0x01, 0x0C]),
            ("compress (.Z)", [0x1F, 0x9D, 0x90]), ("a zip archive", [0x50, 0x4B, 0x03, 0x04]),
            ("a 7-Zip archive", [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]), ("bzip2", Array("BZh91AY&SY".utf8)),
        ]
        for (format, magic) in magics { out.append((format, Data(magic + [0, 0, 1, 2] + Array(text.utf8)))) }
        return out
    }

    func testUnreadFormatsAreNamed() throws {
        let fences = try CLI.temp(self, "fences.geojson", CLI.fences)
        let folder = (fences as NSString).deletingLastPathComponent
        let positions = "device,time,lon,lat\nv,0,0.001,0.001\n"
        let plainPositions = try CLI.temp(self, "p.csv", positions)
        var seen = Set<String>()
        for (format, data) in try samples(of: positions) + (try samples(of: CLI.fences)) {
            seen.insert(format)
            let what = format.hasPrefix("a ") ? format : "\(format)-compressed data"
            let expected = "\(what), which is not read (gzip and zstd are): decompress it first"
            let file = folder + "/in-\(seen.count).bin"
            try data.write(to: URL(fileURLWithPath: file))
            let geojson = folder + "/in-\(seen.count).geojson"
            try data.write(to: URL(fileURLWithPath: geojson))
            let runs: [(args: [String], stdin: String?)] = [
                (["eval", "--fences", fences, "--positions", file], nil),
                (["contains", "--fences", fences, "--positions", file], nil),
                (["eval", "--fences", geojson, "--positions", plainPositions], nil),
                (["check", "--fences", file], nil),
            ]
            for run in runs {
                let r = try CLI.run(run.args, stdin: run.stdin)
                XCTAssertEqual(r.status, 1, "\(format) \(run.args): \(r.err)")
                // OGR opens zip archives, by their name.
                let ogrZip = run.args[0] == "check" && format == "a zip archive"
                XCTAssertTrue(r.err.contains(ogrZip ? "a zip archive, which GDAL opens by its name: name it .zip" : expected),
                              "\(format) \(run.args): \(r.err)")
            }
            // Standard input, through a shell pipe (the bytes are not text).
            for command in ["eval --fences \(fences) --positions -", "eval --fences - --positions \(plainPositions)"] {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: "/bin/sh")
                p.arguments = ["-c", "\"$0\" \(command) < \(file)", CLI.binary(named: "fence").path]
                let err = Pipe()
                p.standardError = err
                p.standardOutput = FileHandle.nullDevice
                try p.run()
                let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                p.waitUntilExit()
                XCTAssertEqual(p.terminationStatus, 1, "\(format) \(command): \(text)")
                XCTAssertTrue(text.contains("fence: standard input: ") && text.contains(expected), "\(format) \(command): \(text)")
            }
        }
        XCTAssertTrue(seen.isSuperset(of: ["xz", "bzip2", "lz4", "a zip archive"]), "\(seen)")
        // Text that merely starts with letters of a magic is read as text.
        for first in ["BZh91AY", "LZIPv", "PK"] {
            let text = try CLI.temp(self, "t.csv", "\(first),0,0.001,0.001\nv,1,0.001,0.001\n")
            let r = try CLI.run(["eval", "--fences", fences, "--positions", text, "--columns", "device,time,lon,lat"])
            XCTAssertEqual(r.status, 0, "\(first): \(r.err)")
            XCTAssertTrue(r.out.contains(#""device":"\#(first)""#) && r.out.contains(#""device":"v""#), "\(first): \(r.out)")
        }
    }
}
