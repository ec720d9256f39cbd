import Foundation
import XCTest

@testable import FenceNATS

/// The lease's record and its judgement of a holder on this host, without a server (the
/// cluster tests run it on a real one).
final class PartitionLeaseTests: XCTestCase {
    func testRecordsRoundTripAndOthersAreUnreadable() {
        for record in [PartitionLease.Record(held: true, owner: "h:1:a"), PartitionLease.Record(held: false, owner: "a b c")] {
            XCTAssertEqual(PartitionLease.Record(decoding: record.encoded()), record)
        }
        for text in ["", "held", "held ", "taken h:1:a", "consuming h:1:a", "HELD h:1:a"] {
            XCTAssertNil(PartitionLease.Record(decoding: Array(text.utf8)), text)
        }
    }

    func testAHolderIsGoneOnlyWhenItsProcessOnThisHostHasEnded() throws {
        let host = ProcessInfo.processInfo.hostName
        let space = try XCTUnwrap(PartitionLease.processSpace)
        // A worker's own name carries its namespace, and is judged.
        let mine = Worker.newOwner()
        XCTAssertTrue(mine.hasSuffix(".\(space)"), mine)
        XCTAssertFalse(PartitionLease.isGoneFromThisHost("\(host):\(getppid()):\(mine.split(separator: ":").last!)"))
        // This process under another name: a restarted worker can get the process id.
        XCTAssertTrue(PartitionLease.isGoneFromThisHost("\(host):\(getpid()):other.\(space)"))
        // A process that ran and ended.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/true")
        try p.run()
        p.waitUntilExit()
        XCTAssertTrue(PartitionLease.isGoneFromThisHost("\(host):\(p.processIdentifier):x.\(space)"))
        // A process that runs (the parent of this one), another host, or a name that is no owner.
        XCTAssertFalse(PartitionLease.isGoneFromThisHost("\(host):\(getppid()):x.\(space)"))
        XCTAssertFalse(PartitionLease.isGoneFromThisHost("not-\(host):\(p.processIdentifier):x.\(space)"))
        // Another process id namespace or boot (a container with this host's name, where a
        // process id means another process), or a name without one (an older worker's): its
        // process id is not judged here, not even this process's own.
        for other in ["", "x", "\(space)0", "0\(space)", "123456789abc-1"] {
            XCTAssertFalse(PartitionLease.isGoneFromThisHost("\(host):\(getpid()):x.\(other)"), other)
            XCTAssertFalse(PartitionLease.isGoneFromThisHost("\(host):\(p.processIdentifier):x.\(other)"), other)
        }
        XCTAssertFalse(PartitionLease.isGoneFromThisHost("\(host):\(getpid()):x"))
        XCTAssertFalse(PartitionLease.isGoneFromThisHost("\(host):\(p.processIdentifier):x"))
        for owner in ["", "x", "\(host):abc:x.\(space)", "\(host):0:x.\(space)", "\(host):-5:x.\(space)", "\(host)::x.\(space)"] {
            XCTAssertFalse(PartitionLease.isGoneFromThisHost(owner), owner)
        }
    }
}
