#!/usr/bin/env python3
"""The mutants of the audit, written for mutate.py: each is (id, file, anchor, old, new, classes),
its line found as the one line of the file holding `anchor` (or `old`).

Usage: python3 Benchmarks/audit/mutants.py OUT [1|2|3|retest]: batch 1 (event engine), 2
(containment, geometry, validation, position checks), 3 (stream, expiry bits, idle queue, order,
pieces, snapshots), retest (the first runs' survivors against the tests added for them), or all."""
import sys

E = "Sources/FenceEngine/Events/"
AP, EV, CR, EVI, FE, EN = (E + "EventEngine+Apply.swift", E + "EventEngine+Evaluate.swift", E + "EventEngine+Cross.swift",
                           E + "EventEngine+Eviction.swift", E + "EventEngine+FenceEdits.swift", E + "EventEngine.swift")
M = [
    ("A1", AP, None, "guard !pair.isStayed && EventEngine", "guard EventEngine", ""),
    ("A2", AP, None, "|| near[k].cls != .deepInside ", "", ""),
    ("A3", AP, None, "guard pairs.count == near.count", "guard pairs.count <= near.count", ""),
    ("A4", AP, None, "if p == 1 && state.pairs[0].isUndetermined { return false }", "", "MarginPolygonBoundsTests,MarginCircleBoundsTests"),
    ("A5", AP, None, "if p == 1 && settings.exitDelay <= 0 {", "if p == 1 {", ""),
    ("A6", AP, "if !first || settings.initialEvents {", "!first || ", "", ""),
    ("A7", AP, "emit(.enter, device: state.id, slot: slot, time: t", "initial: first", "initial: false", ""),
    ("A8", AP, "dwellIfDue(&pair, slot: slot, device: state.id", "dwellIfDue(&pair, slot: slot, device: state.id, time: t, point: point, events: &events)", "_ = 0", ""),
    ("A9", AP, None, " && !state.pairs[0].isExitPending", "", ""),
    ("A10", AP, "        state.lastTime = t\n", "state.lastTime = t", "_ = 0", ""),
    ("A12", AP, None, "if store.mayHaveExpired(asOf: t) { expirePairs(upTo: t, state: &state, events: &events, log: &log) }", "", "ExpiryWalkTests,ExpiredOnAddTests"),
    ("A13", AP, None, "if !settings.crossDetection && state.hasFix && Self.unchanged", "if state.hasFix && Self.unchanged", "CrossPruningTests"),
    ("A14", AP, None, "if delay <= 0 {", "if delay < 0 {", ""),
    ("A15", AP, None, "p.pendingSince = t", "_ = 0", ""),
    ("A16", AP, None, "hasPassed(from: p.pendingSince, to: t, delay)", "hasPassed(from: p.enterTime, to: t, delay)", ""),
    ("A17", AP, None, "p.flags &= ~PairState.exitPending", "_ = 0", ""),
    ("A18", AP, "if !initial || settings.initialEvents {", "!initial || ", "", ""),
    ("A19", AP, None, "} else if first && near[j].cls != .farOutside {", "} else if near[j].cls != .farOutside {", "MarginPolygonBoundsTests"),
    ("A20", AP, None, "if !stored[i].isUndetermined, let slot", "if let slot", "MarginPolygonBoundsTests"),
    ("A21", AP, None, "case .deepInside: enter(near[j].key, slot: Int(near[j].slot), initial: true)", "case .deepInside: enter(near[j].key, slot: Int(near[j].slot), initial: first)", "MarginPolygonBoundsTests"),
    ("A22", AP, None, "case .outsideBand, .insideBand: pairs.append(stored[i])", "case .outsideBand, .insideBand: break", "MarginPolygonBoundsTests"),
    ("A24", AP, None, "if near[j].cls == .deepInside {", "if near[j].cls != .farOutside {", "MarginPolygonBoundsTests"),
    ("A27", AP, None, "guard actions(slot: slot).contains(kind.action) else", "guard actions(slot: slot).contains(kind.action) || true else", ""),
    ("A28", EN, None, "if own != 0xFF {", "if own == 0xFF {", ""),
    ("A29", EN, None, "return own.isNaN ? settings.dwell : own", "return settings.dwell", ""),
    ("A30", EN, None, "return g < 0 ? nil", "return g <= 0 ? nil", ""),
    ("A31", EN, None, "if pair.isUndetermined { return .unknown }", "", "MarginPolygonBoundsTests"),
    ("A32", EN, None, "guard state.hasFix else { return .unknown }", "", ""),
    ("A33", EN, None, "$0.isUndetermined ? nil : store.slot", "store.slot", "MarginPolygonBoundsTests,DevicesInsideTests"),
    ("A34", EN, None, " && !$0.isUndetermined", "", "MarginPolygonBoundsTests,DevicesInsideTests"),
    ("A35", EN, None, "settings.crossDetection ? settings.actions.union(.cross) : settings.actions", "settings.actions", "CrossPruningTests"),
    ("A36", EN, None, "if elapsed < duration - 0x1p-14 { return false }", "if elapsed < duration + 0x1p-14 { return false }", ""),
    ("A37", EN, None, "elapsed >= duration - 2 * Swift.max", "elapsed >= duration - 0 * Swift.max", ""),
    ("A38", EN, None, "if elapsed >= duration - 1e-6 { return true }", "if elapsed >= duration - 1e-3 { return true }", ""),
    ("E1", EV, None, "if t < last {", "if t <= last {", ""),
    ("E2", EV, None, "if t == last {", "if t == last && false {", ""),
    ("E3", EV, None, "EventEngine.hasPassed(from: last, to: t, evictAfter)", "EventEngine.hasPassed(from: last, to: t, evictAfter * 2)", "IdleEvictionTests"),
    ("E4", EV, None, "max(settings.idleEviction, settings.exitDelay) : 0", "settings.idleEviction : 0", "IdleEvictionTests"),
    ("E5", EV, None, "} else if evictAfter > 0 && !states[d].hasFix &&", "} else if false && !states[d].hasFix &&", "IdleEvictionTests,StreamLatenessOracleTests"),
    ("E6", EV, None, "let common = hasCoverage && !settings.crossDetection", "let common = hasCoverage", "CrossPruningTests"),
    ("E7", EV, None, "if expiring && store.slotExpires[slot] <= t { continue }", "if expiring && store.slotExpires[slot] < t { continue }", "ExpiryWalkTests,ExpiredOnAddTests"),
    ("E8", EV, None, "!(store.slotExpires[slot] <= t)", "!(store.slotExpires[slot] < t)", "ExpiryWalkTests,ExpiredOnAddTests"),
    ("E9", EV, None, "(heldKeys & ending == 0 && ", "(", "ExpiryWalkTests"),
    ("E10", EV, None, "return !e.isNaN && e <= time", "return !e.isNaN && e < time", "ExpiryWalkTests"),
    ("E11", EV, None, "let t = max(e, pair.enterTime, state.lastTime)", "let t = max(e, pair.enterTime)", "ExpiryWalkTests"),
    ("E12", EV, None, "guard !pair.isUndetermined, let slot = store.slot(ofKey: pair.fence) else { continue }", "guard let slot = store.slot(ofKey: pair.fence) else { continue }", "MarginPolygonBoundsTests"),
    ("E16", EV, None, "chunkSpans.reduce(watermark) { max($0, $1.latest) }", "chunkSpans.reduce(-.infinity) { max($0, $1.latest) }", "ExpiryWalkTests,IdleEvictionTests"),
    ("E17", EV, None, "if settings.idleEviction > 0 { evictionHorizon = batchEnd }", "", "IdleEvictionTests"),
    ("E18", EV, None, "return ta < tb || (ta == tb && a < b)", "return ta < tb || (ta == tb && a > b)", "EventOrderTests"),
    ("E19", EV, None, "seen[d] = times[f]", "_ = 0", "EventOrderTests"),
    ("E21", EV, None, "baseMargin + (fix.pointee.accuracy ?? 0)", "baseMargin", "MarginPolygonBoundsTests,MarginCircleBoundsTests"),
    ("E22", EV, None, "if fix.pointee.device.isEmpty {", "if false {", "PositionCheckTests"),
    ("E24", EV, None, "if let ending, ending.mayBeHeld(inPartition: number, madeThisBatch: log) {", "if let ending, ending.mayBeHeld(inPartition: number, madeThisBatch: PairLog()) {", "ExpiryWalkTests"),
    ("C1", CR, None, "if store.expiring > 0 && store.slotExpires[s] <= t { continue }", "if store.expiring > 0 && store.slotExpires[s] < t { continue }", "CrossPruningTests"),
    ("C2", CR, None, "if Self.visits(before, key) || ", "if ", "CrossPruningTests"),
    ("C3", CR, None, " || Self.covers(near, key) { continue }", " { continue }", "CrossPruningTests"),
    ("C4", CR, None, "if store.covers(slot: slot, b, unit: &unit,", "if false && store.covers(slot: slot, b, unit: &unit,", "CrossPruningTests"),
    ("C5", CR, None, "if store.covers(slot: slot, a, unit: &unitA,", "if false && store.covers(slot: slot, a, unit: &unitA,", "CrossPruningTests"),
    ("C6", CR, None, "$0.cls.rawValue >= NearFence.Class.insideBand.rawValue", "$0.cls.rawValue > NearFence.Class.insideBand.rawValue", "CrossPruningTests"),
    ("C7", CR, None, "if s00 > 0 && s01 > 0 && s10 > 0 && s11 > 0 { return false }", "if s00 > 0 && s01 > 0 && s10 > 0 { return false }", "CrossPruningTests"),
    ("C9", CR, None, "guard abs(dLon) > 180 else", "guard abs(dLon) > 360 else", "CrossPruningTests"),
    ("C10", CR, None, "let edge: Double = bx < a.lon ? -180 : 180", "let edge: Double = bx < a.lon ? 180 : -180", "CrossPruningTests"),
    ("C12", CR, None, "guard nearest <= r[2] * (1 + 1e-4) + 0.01 else { return false }", "return false", "CrossPruningTests"),
    ("C13", CR, None, "return min(d1, d2, distance(0), distance(1)) <= r[2]", "return min(d1, d2) <= r[2]", "CrossPruningTests"),
    ("C14", CR, None, "guard sum > 1e-280, abs(det) > 1e-15 * sum else", "guard sum > 1e-280, abs(det) > 0 else", "CrossPruningTests"),
    ("C15", CR, None, "if o1 != 0 && o1 == o2 { continue }", "if o1 == o2 { continue }", "CrossPruningTests"),
    ("C16", CR, None, "if o1 != 0 && o2 != 0 && o3 != 0 && o4 != 0 { return true }", "if o1 != 0 && o2 != 0 && o3 != 0 { return true }", "CrossPruningTests"),
    ("C17", CR, None, "if max(cx, dx) < minX ||", "if max(cx, dx) <= minX ||", "CrossPruningTests"),
    ("C18", CR, None, "return uncertain ? nil : false", "return false", "CrossPruningTests"),
    ("C19", CR, None, "for i in 0..<(n - 1) {", "for i in 0..<(n - 2) {", "CrossPruningTests"),
    ("V1", EVI, None, "let t = min(state.lastTime + after, clock)", "let t = state.lastTime + after", "IdleEvictionTests"),
    ("V2", EVI, None, "inside: max(0, state.lastTime - pair.enterTime)", "inside: max(0, t - pair.enterTime)", "IdleEvictionTests"),
    ("V3", EVI, None, "for pair in state.pairs where !pair.isUndetermined {", "for pair in state.pairs {", "IdleEvictionTests"),
    ("V4", EVI, None, "time - last >= after - 0x1p-14", "time - last >= after", "IdleEvictionTests,IdleQueueTests"),
    ("V5", EVI, None, "guard exactly ? last + after <= time : EventEngine", "guard EventEngine", "IdleEvictionTests,IdleQueueTests,BatchPiecesTests"),
    ("V6", EVI, None, "guard d < partition.states.count && !partition.isDormant(d) else", "guard d < partition.states.count else", "IdleEvictionTests,IdleQueueTests"),
    ("V7", EVI, None, "partition.idle.push(time: last, device: entry.id)", "_ = 0", "IdleEvictionTests,IdleQueueTests"),
    ("V8", EVI, None, "for d in nearlyIdle { partition.idle.push", "for d in nearlyIdle where false { partition.idle.push", "IdleEvictionTests,IdleQueueTests"),
    ("F1", FE, None, "guard counts[key] > 0 else { continue }", "guard counts[key] > 1 else { continue }", "ReplacementEditTests"),
    ("F2", FE, None, "if old.actions != actions(slot: Int(slot))", "if old.actions == actions(slot: Int(slot))", "ReplacementEditTests"),
    ("F3", FE, None, "if old.shape != store.shapeDigest(slot: slot)", "if false && old.shape != store.shapeDigest(slot: slot)", "ReplacementEditTests"),
    ("F4", FE, None, "if pair.isUndetermined || !reshaped.contains(pair.fence) {", "if !reshaped.contains(pair.fence) {", "ReplacementEditTests,MarginPolygonBoundsTests"),
    ("F5", FE, "                    p.flags &= ~PairState.exitPending", "p.flags &= ~PairState.exitPending", "_ = 0", "ReplacementEditTests"),
    ("F6", FE, None, "if old.actions.contains(.exit) {", "if true {", "ReplacementEditTests"),
    ("F7", FE, None, "if pair.isUndetermined { continue }", "", "MarginPolygonBoundsTests"),
    ("F8", FE, None, "$0.isFinite ? max($0, state.lastTime) : state.lastTime", "$0.isFinite ? $0 : state.lastTime", ""),
    ("F10", FE, "func setActions(_ actions: FenceActions) -> [FenceEvent]", None, None, ""),
    ("F11", FE, None, "guard !previous(slot).contains(kind.action) else { continue }", "guard previous(slot).contains(kind.action) || true else { continue }", ""),
    ("F12", FE, None, "let kind: FenceEventKind = pair.isStayed ? .dwell : .enter", "let kind: FenceEventKind = .enter", ""),
    ("F13", FE, None, "inside: kind == .dwell ? state.lastTime - pair.enterTime : nil", "inside: nil", ""),
    ("F14", FE, None, "for pair in state.pairs where !pair.isUndetermined {", "for pair in state.pairs {", "MarginPolygonBoundsTests"),
]

CT, DI, CG, AS, SG, FV, PO, PL, IS = ("Sources/FenceEngine/FenceStore+Containment.swift", "Sources/FenceEngine/FenceStore+Distance.swift",
    "Sources/FenceEngine/CircleGeometry.swift", "Sources/FenceEngine/AntimeridianSeam.swift", "Sources/FenceEngine/SmallPolygonGrid.swift",
    "Sources/FenceEngine/FenceValidation.swift", "Sources/FenceEngine/Position.swift", "Sources/FenceIO/PositionLineParser.swift",
    "Sources/FenceIO/ISO8601.swift")
GEO = "ContainmentOracleTests,SmallPolygonGridTests,CircleFenceTests,AntimeridianPolygonTests,FenceStoreTests"
IO = "FenceIOTests.PositionReaderTests,FenceIOTests.PositionFieldNamesTests,FenceIOTests.HeaderlessCSVTests,FenceIOTests.TimeFormatTests,FenceIOTests.FuzzRegressionTests"
M2 = [
    ("K1", DI, None, "if slotBoxCount[Int(slot)] > 1 && !seen.insert(slot).inserted { continue }", "if slotBoxCount[Int(slot)] > 2 && !seen.insert(slot).inserted { continue }", "MarginPolygonBoundsTests,MarginCircleBoundsTests"),
    ("K2", DI, None, "if expiring && slotExpires[Int(slot)] <= time { continue }", "if expiring && slotExpires[Int(slot)] < time { continue }", "MarginPolygonBoundsTests"),
    ("K5", DI, None, "|| boundaryDistance(slot: Int(slot), p, cutoff: margin) >= margin", "|| boundaryDistance(slot: Int(slot), p, cutoff: margin) > margin", "MarginPolygonBoundsTests"),
    ("K6", DI, None, "covered ? (far ? .deepInside : .insideBand)", "covered ? (far ? .deepInside : .outsideBand)", "MarginPolygonBoundsTests,CrossPruningTests"),
    ("K7", DI, None, "if lower >= r + margin + slack { return true }", "if lower >= r + margin - slack { return true }", "MarginCircleBoundsTests"),
    ("K8", DI, None, "if upper <= r - margin - slack { return true }", "if upper <= r - margin + slack { return true }", "MarginCircleBoundsTests"),
    ("K9", DI, None, "if upper < r + margin - slack && lower > r - margin + slack { return false }", "if upper < r + margin + slack && lower > r - margin - slack { return false }", "MarginCircleBoundsTests"),
    ("K10", DI, "return abs(Geodesic.distance(lon1: c.lon, lat1: c.lat, lon2: p.lon, lat2: p.lat) - r) >= margin", ">= margin", "> margin", "MarginCircleBoundsTests"),
    ("K11", DI, None, "let dLat = metres / metresPerDegreeLat * 1.01 + 1e-9", "let dLat = metres / metresPerDegreeLat * 0.9 + 1e-9", "MarginPolygonBoundsTests,MarginCircleBoundsTests"),
    # Run against `min(89.999, ...)`, the line before the fix of commit 12ee5ba; now against `min(90, ...)`.
    ("K12", DI, None, "cos(min(90, abs(p.lat) + dLat) * .pi / 180)", "cos(min(90, abs(p.lat)) * .pi / 180)", "MarginPolygonBoundsTests,MarginCircleBoundsTests"),
    ("N1", CT, None, "if let time, expiringCount > 0 { out.removeAll", "if let time, expiringCount > 1 { out.removeAll", "ExpiredOnAddTests,FenceStoreTests,CoveringAtTimeTests"),
    ("N2", CT, None, "if p.lon == 180 || p.lon == -180 {", "if p.lon == 180 {", "AntimeridianPolygonTests," + GEO),
    ("N3", CT, None, "slab.append { querier.candidates(x: -p.lon, y: p.lat", "slab.append { querier.candidates(x: p.lon, y: p.lat", "AntimeridianPolygonTests," + GEO),
    ("N4", CT, None, "if !covered && onAntimeridian {", "if !covered && onAntimeridian && false {", "AntimeridianPolygonTests," + GEO),
    ("N5", CT, None, "if out.count != start && out[out.count &- 1] >= handle { unordered = true }", "if out.count != start && out[out.count &- 1] > handle { unordered = true }", GEO),
    ("N6", CT, None, "for i in 1..<hits.count where hits[i] != hits[kept &- 1] {", "for i in 1..<hits.count where true {", GEO),
    ("N8", CT, None, "if !covered && (p.lon == 180 || p.lon == -180) { return coversUnderOtherName", "if !covered && (p.lon == 180) { return coversUnderOtherName", "AntimeridianPolygonTests,CrossPruningTests," + GEO),
    ("N9", CT, None, "guard HotWord.kind(word) != FlatGeometry.Kind.circle.rawValue else { return false }", "guard false else { return false }", "AntimeridianPolygonTests," + GEO),
    ("N10", CT, None, "case .interior, .boundary: return true", "case .interior: return true\\n        case .boundary: return false", GEO),
    ("N11", CT, None, "guard RingLocator.inExteriorBox(x: p.lon, y: p.lat, record: record) else { return false }", "", GEO),
    ("N14", CT, None, "return p.isValidWGS84Range ? p : nil", "return p", GEO),
    ("O2", CG, None, "let inner = max(0, (radius - 1) / (meanRadius * (1 + band)))", "let inner = max(0, (radius + 1) / (meanRadius * (1 + band)))", "CircleFenceTests,ContainmentOracleTests"),
    ("O3", CG, None, "let outer = (radius + 1) / (meanRadius * (1 - band))", "let outer = (radius - 1) / (meanRadius * (1 - band))", "CircleFenceTests,ContainmentOracleTests"),
    ("O6", CG, None, "let angle = (radius + 1) / (meanRadius * (1 - band)) * 1.000001 + 1e-12", "let angle = radius / (meanRadius * (1 + band))", "CircleFenceTests,ContainmentOracleTests"),
    ("O7", CG, None, "if angle >= .pi || maxLat >= 90 || minLat <= -90 {", "if angle >= .pi || maxLat >= 90 {", "CircleFenceTests,ContainmentOracleTests"),
    ("O8", CG, None, "if sinAngle >= cosLat {", "if false {", "CircleFenceTests,ContainmentOracleTests"),
    ("O9", CG, None, "if west < -180 {", "if west < -190 {", "CircleFenceTests,ContainmentOracleTests"),
    ("O10", CG, None, "if east > 180 {", "if east > 190 {", "CircleFenceTests,ContainmentOracleTests"),
    ("S1", AS, None, "return (ax >= t && bx >= t) || (ax <= -t && bx <= -t)", "return (ax >= t && bx >= t)", "NearestBoundaryTests"),
    ("S2", AS, None, "if e.ax > 0 { east.append(span) } else { west.append(span) }", "if e.ax < 0 { east.append(span) } else { west.append(span) }", "NearestBoundaryTests"),
    ("S4", AS, None, "if s.lo > lo { parts.append", "if s.lo >= lo { parts.append", "NearestBoundaryTests"),
    ("S5", AS, None, "if lo < hi || (parts.isEmpty && lo == hi && !other.contains(where: { $0.lo <= lo && lo <= $0.hi })) {", "if lo < hi {", "NearestBoundaryTests"),
    ("S6", AS, None, "if lo >= hi { return parts }", "if lo > hi { return parts }", "NearestBoundaryTests"),
    ("G1", SG, "guard u >= 0 && v >= 0 && u <= Double(columns) + 1e-7", "u <= Double(columns) + 1e-7", "u < Double(columns)", GEO),
    ("G2", SG, "guard u >= 0 && v >= 0 && u <= Double(columns) + 1e-7", "guard u >= 0 &&", "guard u > 0 &&", GEO),
    ("G4", SG, None, "if uncertain { return .uncertain }", "", GEO),
    ("G5", SG, None, "                return .boundary", "                return .exterior", GEO),
    ("G7", SG, None, "guard c0 >= 0 && r0 >= 0 && c1 < columns && r1 < rows else { break }", "guard c0 >= 0 && r0 >= 0 && c1 <= columns && r1 < rows else { break }", "MarginPolygonBoundsTests," + GEO),
    ("G8", SG, None, "let step = (r == r0 || r == r1) ? 1 : max(1, 2 &* k)", "let step = (r == r0 || r == r1) ? 1 : max(1, 3 &* k)", "MarginPolygonBoundsTests," + GEO),
    ("G9", SG, None, "let du = min(u - Double(c0), Double(c1 &+ 1) - u)", "let du = max(u - Double(c0), Double(c1 &+ 1) - u)", "MarginPolygonBoundsTests," + GEO),
    ("G10", SG, None, "bound = max(0, min(du * cellX, dv * cellY))", "bound = max(0, max(du * cellX, dv * cellY))", "MarginPolygonBoundsTests," + GEO),
    ("G13", SG, None, "for cy in band(lowY - 2 * margin)...band(highY + 2 * margin) {", "for cy in band(lowY)...band(highY) {", GEO),
    ("G14", SG, None, " && !AntimeridianSeam.isOnLine(coords[2 * e], coords[2 * e + 2]) {", " {", "MarginPolygonBoundsTests,NearestBoundaryTests," + GEO),
    ("G15", SG, None, "x0 = max(x0, min(xa, xb) - widen)", "x0 = max(x0, min(xa, xb))", GEO),
    ("G18", SG, None, "& ((1 &<< UInt64(n &- 1)) &- 1)", "& ((1 &<< UInt64(n)) &- 1)", GEO),
    ("G20", SG, "for i in positions.lowerBound..<(positions.upperBound - 1) {", "(positions.upperBound - 1)", "(positions.upperBound - 2)", GEO),
    ("W1", FV, None, "v > bound && v <= bound + rangeTolerance ? bound", "v > bound ? bound", "FenceStoreTests,AntimeridianPolygonTests,CircleFenceTests"),
    ("W2", FV, None, "!(dwell.isFinite && dwell >= 0)", "!(dwell.isFinite && dwell > 0)", "FenceStoreTests"),
    ("W3", FV, None, "guard radius.isFinite && radius > 0 else {", "guard radius.isFinite && radius >= 0 else {", "FenceStoreTests,CircleFenceTests"),
    ("W4", FV, None, "guard radius <= Self.maxRadius else {", "guard radius <= .infinity else {", "FenceStoreTests,CircleFenceTests"),
    ("W5", FV, None, "if ring.count < 4 {", "if ring.count < 3 {", "FenceStoreTests"),
    ("W6", FV, None, "if ring.first! != ring.last! {", "if false && ring.first! != ring.last! {", "FenceStoreTests"),
    ("W8", FV, None, "if polygons.count == 1 && polygons[0].holes.isEmpty {", "if polygons.count == 1 {", "FenceStoreTests,RingSimplicityTests"),
    ("W9", FV, None, "case .meets(let x, let y, let proper) where !repair:", "case .meets(let x, let y, let proper):", "FenceStoreTests,RingSimplicityTests"),
    ("W10", FV, None, "if polygons.count > limits.maxPolygons {", "if polygons.count >= limits.maxPolygons {", "FenceStoreTests"),
    ("W11", FV, None, "if total > limits.maxPositions {", "if total >= limits.maxPositions {", "FenceStoreTests"),
    ("P1", PO, None, "lon >= -180 && lon <= 180", "lon > -180 && lon <= 180", "PositionCheckTests," + IO),
    ("P2", PO, None, "lat >= -90 && lat <= 90", "lat >= -90 && lat < 90", "PositionCheckTests," + IO),
    ("P3", PO, None, "(accuracy.map { $0.isFinite && $0 >= 0 } ?? true)", "(accuracy.map { $0.isFinite && $0 > 0 } ?? true)", "PositionCheckTests," + IO),
    ("P4", PO, None, "static var timeLimit: Double { 253_402_300_799.9995 }", "static var timeLimit: Double { 253_402_300_800.0005 }", "PositionCheckTests," + IO),
    ("L1", PL, None, "if device.utf8.allSatisfy({ $0 == 32 || $0 == 9 }) { return fail(\"blank device\") }", "", IO),
    ("L2", PL, None, "if device.isEmpty { return fail(\"empty device\") }", "", IO),
    ("L3", PL, None, "if !p.isUsable, var problem", "if false, var problem", IO),
    ("L5", PL, None, "if index >= columnCount {", "if index > columnCount {", IO),
    ("L7", PL, None, "if i < n && line[i] != delimiter {", "if false {", IO),
    ("L8", PL, None, "for r in repeated where ranked(r.field)?.rank == r.rank { return fail", "for r in repeated where false { return fail", IO),
    ("I1", IS, None, "guard month >= 1 && month <= 12 && day >= 1 && day <= daysIn(month: month, year: year) else { return nil }", "guard month >= 1 && month <= 12 && day >= 1 && day <= 31 else { return nil }", IO),
    ("I2", IS, None, "guard hour <= 24 && minute <= 59 && whole <= 60 else { return nil }", "guard hour <= 24 && minute <= 60 && whole <= 60 else { return nil }", IO),
    ("I3", IS, None, "guard minute == 0, whole == 0, fraction.allSatisfy", "guard minute == 0, fraction.allSatisfy", IO),
    ("I4", IS, None, "total -= sign * (oh * 3600 + om * 60)", "total += sign * (oh * 3600 + om * 60)", IO),
    ("I5", IS, None, "guard i == n, oh <= 23, om <= 59 else { return nil }", "guard oh <= 23, om <= 59 else { return nil }", IO),
    ("I6", IS, None, "static func isLeap(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }", "static func isLeap(_ y: Int) -> Bool { y % 4 == 0 }", IO),
]

ST, EF, IQ, OR, PI, TS, TB = (E + "EventStream.swift", E + "EndingFences.swift", E + "IdleQueue.swift", E + "EventEngine+Order.swift",
    E + "EventEngine+Pieces.swift", E + "TrackerSnapshot.swift", E + "TrackerSnapshot+Binary.swift")
SNAP = "SnapshotRestoreCheckTests,FenceIOTests.StateVisitsTests,FenceIOTests.CLITests"
M3 = [
    ("T1", ST, None, "if !fix.isUsable || fix.device.isEmpty {", "if !fix.isUsable {", "StreamLatenessOracleTests"),
    ("T2", ST, None, "if fix.time < max(horizon, latestSeen - lateness) {", "if fix.time <= max(horizon, latestSeen - lateness) {", "StreamLatenessOracleTests"),
    ("T3", ST, None, "if fix.time < max(horizon, latestSeen - lateness) {", "if fix.time < horizon {", "StreamLatenessOracleTests"),
    ("T5", ST, None, "return release { $0.time <= next }", "return release { $0.time < next }", "StreamLatenessOracleTests"),
    ("T6", ST, None, "horizon = max(horizon, latestSeen)", "_ = 0", "StreamLatenessOracleTests"),
    ("T7", ST, None, "latestSeen = max(latestSeen, fix.time)", "latestSeen = fix.time", "StreamLatenessOracleTests"),
    ("U1", EF, None, "if partitions & (1 << UInt64(p)) != 0 { return true }", "", "ExpiryWalkTests,ExpiryQueueTests"),
    ("U2", EF, None, "return log.entries.contains { $0 > 0 && bits & DeviceState.keyBit($0 - 1) != 0 }", "return false", "ExpiryWalkTests,ExpiryQueueTests"),
    ("Q1", IQ, None, "if Int(d) < covered { heap.push(time: -.infinity, id: d) }", "", "IdleEvictionTests,IdleQueueTests"),
    ("R1", OR, None, "if a.prefix != b.prefix { return a.prefix < b.prefix }", "", "EventOrderTests,ParallelEventTests"),
    ("Z1", PI, None, "if cut > (cuts.last ?? floor) { cuts.append(cut) }", "if cut >= (cuts.last ?? floor) { cuts.append(cut) }", "BatchPiecesTests"),
    ("Z2", PI, None, "if cuts[mid] <= ms { lo = mid + 1 } else { hi = mid }", "if cuts[mid] < ms { lo = mid + 1 } else { hi = mid }", "BatchPiecesTests"),
    ("Z3", PI, None, "lastPiece: p == pieces.count - 1)", "lastPiece: true)", "BatchPiecesTests"),
    ("Z4", PI, None, "let floor = max(sampleTimes[0], FenceEvent.outputMillisecond(watermark))", "let floor = sampleTimes[0]", "BatchPiecesTests"),
    ("Z5", PI, None, "part.rejected = part.rejected.map { (index: indices[$0.index], reason: $0.reason) }", "", "BatchPiecesTests"),
    ("X1", TB, None, "guard !t.isFinite || t <= watermark else", "guard true else", SNAP),
    ("X2", TB, None, "guard enter <= t && (!pair.exitPending", "guard (!pair.exitPending", SNAP),
    ("X3", TB, None, "(pending >= enter && pending <= t)", "(pending <= t)", SNAP),
    ("X4", TB, None, "guard !pair.undetermined || !(pair.stayed || pair.exitPending) else {", "guard true else {", SNAP),
    ("X5", TB, None, "guard t.isFinite || device.pairs.isEmpty else", "guard true else", SNAP),
    ("X6", TB, None, "if k > 0, UTF8Order.compare(devices[k - 1].id, id) >= 0 { ascending = false }", "if k > 0, UTF8Order.compare(devices[k - 1].id, id) > 0 { ascending = false }", SNAP),
    ("X7", TB, None, "if j == 15 { pairSet = Set(device.pairs[...j]", "if j == 14 { pairSet = Set(device.pairs[...j]", SNAP),
    ("Y1", TS, None, "if !pair.undetermined { dropped += 1 }", "dropped += 1", SNAP),
    ("Y2", TS, None, "where store.slotByID[pair.fence] == nil && !pair.undetermined {", "where store.slotByID[pair.fence] == nil {", SNAP),
    ("Y3", TS, None, "guard oldMask(record).contains(.exit) else { continue }", "", SNAP),
    ("Y4", TS, None, "guard let r, r.actions != 0xFF else { return oldEngine }", "guard let r else { return oldEngine }", SNAP),
    ("Y5", TS, None, "guard let slot = store.slotByID[r.id], r.shapeDigest != store.shapeDigest(slot: slot) else { continue }", "guard let slot = store.slotByID[r.id], false else { continue }", SNAP),
    ("Y6", TS, None, "evictionHorizon = settings.idleEviction > 0 ? watermark : -.infinity", "evictionHorizon = -.infinity", SNAP + ",IdleEvictionTests"),
    ("Y8", TS, None, "return (dropped, Self.sorted(expireAsOfWatermark())) }", "return (dropped, []) }", SNAP + ",ExpiryWalkTests"),
]

# Survivors of the first runs, each against the test class written for it.
RETEST = {
    "A4": "HysteresisOffTests", "A32": "StatusBeforeFirstFixTests", "A38": "DurationEdgeTests",
    "C14": "CrossEdgeRoundingTests", "C16": "CrossEdgeRoundingTests", "V3": "IdleUnknownStatusTests",
    "V8": "NearlyIdleDeviceTests", "F14": "HysteresisEdgeTests", "K5": "HysteresisEdgeTests", "K10": "HysteresisEdgeTests",
    "K11": "NearFenceQueryTests", "K12": "NearFenceQueryTests", "N14": "OutOfRangeQueryTests",
    "W8": "FenceValidationEdgeTests", "W9": "FenceValidationEdgeTests", "W10": "FenceValidationEdgeTests",
    "W11": "FenceValidationEdgeTests", "L7": "FenceIOTests.PositionReaderTests", "I2": "FenceIOTests.PositionReaderTests",
    "I5": "FenceIOTests.PositionReaderTests", "T5": "StreamHorizonTests", "Z2": "BatchPiecesTests",
    "X3": "SnapshotRestoreCheckTests", "X7": "SnapshotRestoreCheckTests", "Y6": "RestoreEdgeTests", "Y8": "RestoreEdgeTests",
}


def main():
    out = open(sys.argv[1] if len(sys.argv) > 1 else "Benchmarks/audit/mutants.txt", "w")
    which = sys.argv[2] if len(sys.argv) > 2 else ""
    chosen = {"1": M, "2": M2, "3": M3}.get(which, M + M2 + M3)
    if which == "retest":
        chosen = [(m[0], m[1], m[2], m[3], m[4], RETEST[m[0]]) for m in M + M2 + M3 if m[0] in RETEST]
    for mid, path, anchor, old, new, classes in chosen:
        if old is None:
            continue
        text = open(path).read().split("\n")
        key = anchor.strip("\n") if anchor else old
        hits = [i for i, l in enumerate(text) if key.strip() in l and old in l] if anchor != "        state.lastTime = t\n" else \
            [i for i, l in enumerate(text) if l == "        state.lastTime = t"]
        if mid == "A10":
            hits = hits[:1]  # applyCommon's, the first of two alike
        if len(hits) != 1:
            print(f"{mid}: {len(hits)} lines hold the anchor", file=sys.stderr)
            continue
        out.write("\t".join([mid, path, str(hits[0] + 1), old, new, classes or "-"]) + "\n")


if __name__ == "__main__":
    main()
