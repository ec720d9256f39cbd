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
        // This process under another name: a restarted container's worker often has the pid.
        XCTAssertTrue(PartitionLease.isGoneFromThisHost("\(host):\(getpid()):other"))
        // A process that ran and ended.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/true")
        try p.run()
        p.waitUntilExit()
        XCTAssertTrue(PartitionLease.isGoneFromThisHost("\(host):\(p.processIdentifier):x"))
        // A process that runs (the parent of this one), another host, or a name that is no owner.
        XCTAssertFalse(PartitionLease.isGoneFromThisHost("\(host):\(getppid()):x"))
        XCTAssertFalse(PartitionLease.isGoneFromThisHost("not-\(host):\(p.processIdentifier):x"))
        for owner in ["", "x", "\(host):abc:x", "\(host):0:x", "\(host):-5:x", "\(host)::x"] {
            XCTAssertFalse(PartitionLease.isGoneFromThisHost(owner), owner)
        }
    }
}
