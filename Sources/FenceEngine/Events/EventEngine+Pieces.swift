extension EventEngine {
    /// About how many (fix, fence) matches one pass of `evaluate` may hold: 2^24, about 280 MB
    /// of match lists at 16.5 bytes a match. A batch expected to hold more is cut into pieces.
    public static let defaultMatchBudget = 1 << 24

    /// Batches smaller than this are never cut: even a thousand fences over every fix make
    /// about 135 MB of match lists, and the estimate would cost a tenth of the pass.
    static let minimumCutFixes = 8_192

    /// Fixes sampled for the estimate of a batch's matches.
    static let matchSampleSize = 1_024

    /// Where a batch is cut, in event time, so that each piece holds about `matchBudget`
    /// (fix, fence) matches: nil when one pass will do (fewer than `minimumCutFixes` fixes, or
    /// fewer matches expected than the budget). Otherwise each piece's input indices,
    /// ascending, pieces in time order: every fix of a piece is in a later written millisecond
    /// than every fix of the pieces before it, so fixes of one time (a device's duplicates) stay
    /// together, no piece makes another's fix late, and the pieces applied one after another
    /// give the events one pass gives (event time decides, not the batch; `evaluate`'s batch
    /// invariance). Fixes that will be refused go with the first piece.
    ///
    /// The estimate: `matchSampleSize` fixes evenly spaced through the input (in input order)
    /// are located exactly (`FenceStore.fences(covering:)`), and their mean matches times the
    /// batch's fixes is the batch's; the cuts are the sample's time quantiles. So the budget is
    /// met on average, not promised: a piece whose fixes match more than the sample's holds more.
    /// A batch whose fixes are all in one millisecond cannot be cut.
    /// - Complexity: O(s (log n + k·v)) for the sample of s, plus O(m log p) for m fixes and p
    ///   pieces when it cuts.
    public func pieces(of fixes: [Position], matchBudget: Int = EventEngine.defaultMatchBudget) -> [[Int]]? {
        let m = fixes.count
        guard m >= Self.minimumCutFixes, matchBudget > 0 else { return nil }
        let samples = min(m, Self.matchSampleSize)
        var matches = 0
        var sampleTimes: [Double] = []
        sampleTimes.reserveCapacity(samples)
        for j in 0..<samples {
            let fix = fixes[j * m / samples]
            guard fix.isUsable && !fix.device.isEmpty else { continue }
            matches += store.fences(covering: fix.wgs84).count
            sampleTimes.append(FenceEvent.outputMillisecond(fix.time))
        }
        guard !sampleTimes.isEmpty else { return nil }
        let expected = Double(matches) / Double(sampleTimes.count) * Double(m)
        let wanted = Int(min(Double(samples), (expected / Double(matchBudget)).rounded(.up)))
        guard wanted > 1 else { return nil }
        sampleTimes.sort()
        // A fix goes to the piece after the last cut at or before its written millisecond.
        var cuts: [Double] = []
        for q in 1..<wanted {
            let cut = sampleTimes[q * sampleTimes.count / wanted]
            if cut > (cuts.last ?? sampleTimes[0]) { cuts.append(cut) }
        }
        guard !cuts.isEmpty else { return nil }
        var pieces = [[Int]](repeating: [], count: cuts.count + 1)
        for (i, fix) in fixes.enumerated() {
            guard fix.isUsable && !fix.device.isEmpty else {
                pieces[0].append(i)
                continue
            }
            let ms = FenceEvent.outputMillisecond(fix.time)
            var lo = 0
            var hi = cuts.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if cuts[mid] <= ms { lo = mid + 1 } else { hi = mid }
            }
            pieces[lo].append(i)
        }
        pieces.removeAll { $0.isEmpty }
        return pieces.count > 1 ? pieces : nil
    }

    /// Applies a batch of fixes, in any order, and returns the events they cause.
    ///
    /// A batch expected to hold more than `matchBudget` (fix, fence) matches (many overlapping
    /// fences) is applied in pieces in event time (`pieces(of:matchBudget:)`), so its match
    /// lists are bounded by the budget rather than by the batch; the events are the same as
    /// in one pass (`evaluateWhole`), merged into one list in (time, device, fence, event)
    /// order, and the counts are summed. To bound the events held as well, apply the pieces
    /// yourself and hand each one's events on (`fence eval` does).
    /// - Complexity: as one pass (see `evaluateWhole`), plus the estimate (`pieces`), which
    ///   locates about a thousand fixes when the batch has at least 8,192.
    public mutating func evaluate(
        _ fixes: [Position], threads: Int = FenceStore.defaultThreads, matchBudget: Int = EventEngine.defaultMatchBudget
    ) -> EvaluationResult {
        guard let pieces = pieces(of: fixes, matchBudget: matchBudget) else { return evaluateWhole(fixes, threads: threads) }
        var result = EvaluationResult(events: [], rejected: [], late: 0, duplicates: 0, applied: 0)
        var events: [[FenceEvent]] = []
        for indices in pieces {
            let part = evaluateWhole(indices.map { fixes[$0] }, threads: threads)
            events.append(part.events)
            result.rejected += part.rejected.map { (index: indices[$0.index], reason: $0.reason) }
            result.late += part.late
            result.duplicates += part.duplicates
            result.applied += part.applied
            result.earliest = min(result.earliest, part.earliest)
        }
        result.rejected.sort { $0.index < $1.index }
        result.events = Self.mergeSorted(&events, threads: threads)
        return result
    }
}
