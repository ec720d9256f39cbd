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
    /// (fix, fence) matches: nil when one pass will do (fewer than `minimumCutFixes` fixes,
    /// fewer matches expected than the budget, or no cut to make). Otherwise each piece's
    /// input indices, ascending, pieces in time order.
    ///
    /// Each piece is whole written milliseconds (`FenceEvent.outputMillisecond`), later than
    /// every fix of the pieces before it, and every piece after the first is later than the
    /// engine's watermark: the first holds every fix up to it, and the fixes to be refused.
    /// So fixes of one time (a device's duplicates) stay together, no piece makes another's
    /// fix late, and each piece's end is a clock a time-ordered feed would have had: applied
    /// one after another (`evaluate`), the pieces give the events of one pass. (A batch from
    /// before the watermark, cut there, would expire fences and move the eviction horizon for
    /// the fixes of later pieces that one pass judges against the old ones: an independent
    /// review found both.)
    ///
    /// The estimate: `matchSampleSize` fixes evenly spaced through the input (in input order)
    /// are located exactly (`FenceStore.covering`), and their mean matches times the batch's
    /// fixes is the batch's; the cuts are the sample's time quantiles. So the budget is met on
    /// average, not promised: a piece whose fixes match more than the sample's holds more. A
    /// batch whose fixes are all in one millisecond, or all at or before the watermark's, is
    /// not cut.
    /// - Complexity: O(s (log n + k·v)) for the sample of s, plus O(m log p) for m fixes and p
    ///   pieces when it cuts.
    public func pieces(of fixes: [Position], matchBudget: Int = EventEngine.defaultMatchBudget) -> [[Int]]? {
        let m = fixes.count
        guard m >= Self.minimumCutFixes, matchBudget > 0 else { return nil }
        let samples = min(m, Self.matchSampleSize)
        var sampleTimes: [Double] = []
        var samplePoints: [LonLat] = []
        sampleTimes.reserveCapacity(samples)
        samplePoints.reserveCapacity(samples)
        for j in 0..<samples {
            let fix = fixes[j * m / samples]
            guard fix.isUsable && !fix.device.isEmpty else { continue }
            samplePoints.append(fix.wgs84)
            sampleTimes.append(FenceEvent.outputMillisecond(fix.time))
        }
        guard !sampleTimes.isEmpty else { return nil }
        let matches = samplePoints.withUnsafeBufferPointer { store.covering($0, coord: .wgs84, threads: 1).pairCount }
        let expected = Double(matches) / Double(sampleTimes.count) * Double(m)
        let wanted = Int(min(Double(samples), (expected / Double(matchBudget)).rounded(.up)))
        guard wanted > 1 else { return nil }
        sampleTimes.sort()
        // A fix goes to the piece after the last cut at or before its written millisecond.
        // No cut at or before the watermark's millisecond.
        var cuts: [Double] = []
        let floor = max(sampleTimes[0], FenceEvent.outputMillisecond(watermark))
        for q in 1..<wanted {
            let cut = sampleTimes[q * sampleTimes.count / wanted]
            if cut > (cuts.last ?? floor) { cuts.append(cut) }
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

    /// Applies a batch of fixes, in any order, and hands over what they cause piece by piece:
    /// one piece, the whole batch, unless it is expected to hold more than `matchBudget`
    /// (fix, fence) matches (many overlapping fences); then the pieces of
    /// `pieces(of:matchBudget:)`, one after another, so the match lists held are bounded by
    /// the budget rather than by the batch. Each result's refusals carry indices into
    /// `fixes`; its `watermark` says which of its events no later piece's or batch's event
    /// can come before (those in an earlier written millisecond), so a caller can write
    /// those before the next piece is applied, and hold only one piece's events at a time
    /// (`fence eval` does). The events, merged, are those of one pass over the batch.
    /// - Complexity: as one pass (see `evaluateWhole`), plus the estimate (`pieces`), which
    ///   locates about a thousand fixes when the batch has at least 8,192, plus an idle
    ///   eviction at each piece's end with `idleEviction` (`IdleQueue`).
    public mutating func evaluate(
        _ fixes: [Position], threads: Int = FenceStore.defaultThreads, matchBudget: Int = EventEngine.defaultMatchBudget,
        each: (EvaluationResult) throws -> Void
    ) rethrows {
        guard let pieces = pieces(of: fixes, matchBudget: matchBudget) else {
            return try each(evaluateWhole(fixes, threads: threads))
        }
        for (p, indices) in pieces.enumerated() {
            var part = evaluateWhole(indices.map { fixes[$0] }, threads: threads, lastPiece: p == pieces.count - 1)
            part.rejected = part.rejected.map { (index: indices[$0.index], reason: $0.reason) }
            try each(part)
        }
    }

    /// Applies a batch of fixes, in any order, and returns the events they cause, in (time,
    /// device, fence, event) order: `evaluate(_:threads:matchBudget:each:)` with the pieces'
    /// results put together (events merged, refusals by index, counts summed).
    public mutating func evaluate(
        _ fixes: [Position], threads: Int = FenceStore.defaultThreads, matchBudget: Int = EventEngine.defaultMatchBudget
    ) -> EvaluationResult {
        var parts: [EvaluationResult] = []
        evaluate(fixes, threads: threads, matchBudget: matchBudget) { parts.append($0) }
        if parts.count == 1 { return parts[0] }
        var result = EvaluationResult(events: [], rejected: [], late: 0, duplicates: 0, applied: 0)
        var events: [[FenceEvent]] = []
        for part in parts {
            events.append(part.events)
            result.rejected += part.rejected
            result.late += part.late
            result.duplicates += part.duplicates
            result.applied += part.applied
            result.earliest = min(result.earliest, part.earliest)
            result.watermark = max(result.watermark, part.watermark)
        }
        parts = []
        result.rejected.sort { $0.index < $1.index }
        result.events = Self.mergeSorted(&events, threads: threads)
        return result
    }
}
