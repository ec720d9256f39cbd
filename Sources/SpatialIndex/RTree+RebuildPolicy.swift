// When the tree repacks itself.
//
// Dynamic inserts and removes keep the tree valid but let it drift from the packed shape: boxes
// overlap more and point queries enter more nodes. The policy: after every insert or remove, if
// `updatesSinceRebuild > max(minimumUpdatesBeforeRebuild, count / 2)` (the minimum is 1024), the
// tree calls `rebuild()`.
//
// Cost: a rebuild is O(n) (radix-sorted STR; O(n log n) with any comparison sort) and follows
// at least max(1024, n / 2) updates, so it adds O(1) amortised to each update, within the
// O(log n) an update costs anyway. A tree grown from empty by inserts is rebuilt at roughly
// doubling sizes (1025, 2050, 4100, ...), O(log n) rebuilds in all.
//
// Quality: between packings the tree sees at most count / 2 updates, so at least about half its
// items still sit where STR put them. `RebuildPolicyTests` replaces 10% of 20,000 items per round
// for 20 rounds: point queries entered at most 1.08x the nodes of a fresh packing of the same
// items (the test allows 2x). R* splits and CondenseTree keep the dynamic shape good on their
// own (1.06x without rebuilds under that churn, 1.17x after 20,000 inserts in x order); the
// policy is the guarantee for workloads that do worse.

extension RTree {
    /// Updates after which the next insert or remove repacks the tree.
    ///
    /// - Complexity: O(1).
    public var rebuildThreshold: Int { Swift.max(minimumUpdatesBeforeRebuild, count / 2) }

    /// Counts one update and rebuilds when the policy says so.
    mutating func noteUpdate() {
        updatesSinceRebuild += 1
        if updatesSinceRebuild > rebuildThreshold {
            rebuild()
        }
    }
}
