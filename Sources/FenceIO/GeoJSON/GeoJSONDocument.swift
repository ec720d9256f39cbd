import FenceEngine

/// One pass over a GeoJSON document: the FeatureCollection (or Feature) around the features.
struct GeoJSONDocument {
    var scanner: JSONScanner
    let layer: String
    let options: FenceInputOptions
    var result = FenceReadResult(reader: .native)
    /// The document's `crs` member, if it has one (`GeoJSONDocument+CRS`).
    var crs: DeclaredCRS?
    /// Every name `FenceFields` gives a role: these properties are settings.
    let settingNames: Set<String>

    /// - Parameter settingNames: the properties to read as values (`FeatureDraft.found`);
    ///   by default every name `options.fields` gives a role.
    init(scanner: JSONScanner, layer: String, options: FenceInputOptions, settingNames: Set<String>? = nil) {
        self.scanner = scanner
        self.layer = layer
        self.options = options
        self.settingNames = settingNames ?? options.fields.allNames
        result.layers = [layer]
    }

    mutating func read() throws {
        // RFC 8142: every record of a GeoJSON text sequence starts with RS.
        if scanner.peek() == JSONScanner.recordSeparator { return readSequence(after: 0, separatedByRS: true) }
        guard scanner.peek() == 123 else {
            if scanner.peek() == nil { throw JSONScanner.Failure(offset: scanner.at, message: "the document is empty") }
            if scanner.peek() == 91 || scanner.peek() == 34 || scanner.peek().map(JSONScanner.startsNumber) == true {
                _ = try scanner.skipValue()
                try scanner.expectEnd()
                throw FenceError(.malformedInput, reason: "the document is not a JSON object")
            }
            throw scanner.fail("expected a JSON object")
        }
        // The top level is either a FeatureCollection or itself a Feature, with members in any
        // order: read it as a feature that may also hold "features".
        var top = FeatureDraft()
        var sawFeatures = false
        scanner.at += 1
        if !scanner.take(125) {
            repeat {
                let key = try scanner.string()
                try scanner.expect(58, ":")
                if scanner.equals(key, "features") {
                    sawFeatures = try readFeatures()
                } else if scanner.equals(key, "crs") {
                    crs = try readCRS()
                } else {
                    try readMember(key, of: &top)
                }
            } while try scanner.next(closing: 125)
        }
        // A Feature with another value after it: one Feature per line (GeoJSONSeq, ndjson).
        if top.type == "Feature", !sawFeatures, anotherRecordFollows() {
            finish(top, number: 1)
            return readSequence(after: 1, separatedByRS: false)
        }
        try scanner.expectEnd()
        switch top.type {
        case "FeatureCollection":
            guard sawFeatures else { throw FenceError(.malformedInput, reason: "the FeatureCollection has no \"features\" array") }
        case "Feature":
            finish(top, number: 1)
        default:
            throw FenceError(.malformedInput, reason: "expected a FeatureCollection or a Feature")
        }
    }

    /// The `features` array; false when it is not an array (skipped).
    ///
    /// With `options.threads` over 1 and at least `options.parallelMinimumBytes` from the
    /// array's start to the document's end, the array is cut into parts (`FeatureSplit`) read
    /// on that many workers and joined in order: the same fences, origins and rejections as
    /// one thread reads. When a
    /// part does not parse as the cut promised (malformed JSON), the array is read again from
    /// its start on this thread, which reports the error it always did.
    mutating func readFeatures() throws(JSONScanner.Failure) -> Bool {
        guard scanner.peek() == 91 else {
            _ = try scanner.skipValue()
            return false
        }
        scanner.at += 1
        if scanner.take(93) { return true }
        if options.threads > 1, scanner.bytes.count - scanner.at >= options.parallelMinimumBytes {
            var clock = PhaseTimer("features")
            if let split = FeatureSplit.split(scanner.bytes, from: scanner.at, count: min(options.threads, 4096) * 4),
               split.parts.count > 1, readInParallel(split, clock: &clock) {
                clock.mark("join")
                clock.report()
                scanner.at = split.close + 1
                return true
            }
        }
        var number = 0
        repeat {
            number += 1
            try readFeature(number: number)
        } while try scanner.next(closing: 93)
        return true
    }

    /// One element of the `features` array, finished as fence or rejection.
    mutating func readFeature(number: Int) throws(JSONScanner.Failure) {
        finish(try readDraft(), number: number)
    }

    /// One feature's members, read as far as the reader reads them (anything but an object is
    /// skipped and leaves an empty draft).
    mutating func readDraft() throws(JSONScanner.Failure) -> FeatureDraft {
        var draft = FeatureDraft()
        if scanner.peek() == 123 {
            scanner.at += 1
            if !scanner.take(125) {
                repeat {
                    let key = try scanner.string()
                    try scanner.expect(58, ":")
                    try readMember(key, of: &draft)
                } while try scanner.next(closing: 125)
            }
        } else {
            _ = try scanner.skipValue()
        }
        return draft
    }

    /// The parts of `split` read on `options.threads` workers, each by a copy of this reader
    /// with a result of its own, and appended to `result` in order. False, with `result`
    /// untouched, when any part fails to parse or does not end exactly at its cut. With
    /// `FENCE_PHASES` set, `clock` prints the cut, parse and join times.
    /// - Complexity: O(bytes) over the workers; memory: the parts' results until joined.
    mutating func readInParallel(_ split: FeatureSplit, clock: inout PhaseTimer) -> Bool {
        clock.mark("split")
        var partResults = [FenceReadResult?](repeating: nil, count: split.parts.count)
        let template = self
        partResults.withUnsafeMutableBufferPointer { slots in
            nonisolated(unsafe) let slots = slots
            Parallel.forEachChunk(count: split.parts.count, chunkSize: 1, threads: options.threads, makeState: { () }) { _, index, _ in
                var reader = template
                reader.result = FenceReadResult(reader: .native)
                slots[index] = reader.readPart(split.parts[index]) ? reader.result : nil
            }
        }
        guard partResults.allSatisfy({ $0 != nil }) else { return false }
        clock.mark("parse")
        // Moved end to end on the workers: copying each fence retained its shape (a cache miss
        // a fence) and one thread touched every fresh page (0.3-0.6 s of a million fences).
        result.parallelParts = split.parts.count
        var fenceParts: [[Fence]] = []
        var originParts: [[FeatureOrigin]] = []
        for i in partResults.indices {
            var part = partResults[i].take()!
            fenceParts.append(part.fences)
            originParts.append(part.origins)
            part.fences = []
            part.origins = []
            result.rejected.append(contentsOf: part.rejected)
        }
        let fences = Parallel.moveEndToEnd(
            &fenceParts, filler: Fence(id: "", shape: .polygons([])), threads: options.threads)
        let origins = Parallel.moveEndToEnd(&originParts, filler: FeatureOrigin(layer: "", index: 0), threads: options.threads)
        if result.fences.isEmpty {
            result.fences = fences
            result.origins = origins
        } else {
            result.fences.append(contentsOf: fences)
            result.origins.append(contentsOf: origins)
        }
        return true
    }

    /// The elements of one part: true when they parse and the last ends exactly at the cut.
    mutating func readPart(_ part: FeatureSplit.Part) -> Bool {
        scanner.at = part.start
        var number = part.firstNumber
        do {
            while true {
                try readFeature(number: number)
                scanner.space()
                if scanner.at == part.end { return true }
                guard scanner.at < part.end, scanner.take(44) else { return false }
                number += 1
            }
        } catch {
            return false
        }
    }

    /// One member of a Feature object. A member it reads given twice is noted on the draft.
    mutating func readMember(_ key: JSONScanner.StringToken, of draft: inout FeatureDraft) throws(JSONScanner.Failure) {
        if scanner.equals(key, "type") {
            draft.noteMember(.type)
            if scanner.peek() == 34 { draft.type = scanner.text(try scanner.string()) } else { _ = try scanner.skipValue() }
        } else if scanner.equals(key, "id") {
            draft.noteMember(.id)
            let value = try attributeValue(from: .featureID, draft: &draft)
            draft.featureID = value
        } else if scanner.equals(key, "properties") {
            draft.noteMember(.properties)
            try readProperties(&draft)
        } else if scanner.equals(key, "geometry") {
            draft.noteMember(.geometry)
            try readGeometry(&draft)
        } else {
            let (range, depth) = try scanner.skipValue()
            _ = range
            if depth > options.limits.maxNesting { draft.noteNesting(scanner.text(key), depth: depth, limit: options.limits.maxNesting) }
        }
    }

    /// A value as an `AttributeValue`; nil for JSON null. A string in it that is not text is
    /// noted on the draft (the feature is refused) and read repaired meanwhile.
    mutating func attributeValue(from source: FeatureDraft.Source, draft: inout FeatureDraft) throws(JSONScanner.Failure) -> AttributeValue? {
        func checked(_ result: Result<String, TextProblem>, repaired: @autoclosure () -> String) -> String {
            switch result {
            case .success(let s): return s
            case .failure(let problem):
                draft.noteBadText(problem, in: source)
                return repaired()
            }
        }
        guard let c = scanner.peek() else { throw scanner.fail("unexpected end of input") }
        if c == 34 {
            let token = try scanner.string()
            return .text(checked(scanner.decoded(token), repaired: scanner.text(token)))
        }
        if JSONScanner.startsNumber(c) {
            // The text as written as well as the value: an id keeps its digits.
            let start = scanner.at
            let value = try scanner.number()
            let text = String(decoding: UnsafeBufferPointer(rebasing: scanner.bytes[start..<scanner.at]), as: UTF8.self)
            return .jsonNumber(text: text, value: value)
        }
        let (range, depth) = try scanner.skipValue()
        if depth > options.limits.maxNesting {
            let name: String
            switch source {
            case .featureID: name = "id"
            case .property(let key): name = key
            case .propertyName: name = "?"
            }
            draft.noteNesting(name, depth: depth, limit: options.limits.maxNesting)
            return .other("?")
        }
        let text = checked(scanner.checkedCompactText(range), repaired: scanner.compactText(range))
        if text == "null" { return nil }
        if c == 91, depth == 1 {
            // An array of strings (actions as a list).
            var strings: [String] = []
            var inner = JSONScanner(scanner.bytes)
            inner.at = range.lowerBound + 1
            if !inner.take(93) {
                repeat {
                    guard inner.peek() == 34 else { return .other(text) }
                    let token = try inner.string()
                    strings.append(checked(inner.decoded(token), repaired: inner.text(token)))
                } while try inner.next(closing: 93)
            }
            return .list(strings)
        }
        return .other(text)
    }

    /// A feature's GeoJSON text (GDAL's GeoJSON driver hands it over as the feature's native
    /// data) read as this reader reads a feature, with the properties `names` as values
    /// (`FeatureDraft.found`); nil when it is not one JSON value.
    /// - Complexity: O(bytes of the feature), its coordinates included.
    static func draft(ofFeature text: String, names: Set<String>) -> FeatureDraft? {
        reading(text, names: names) { document throws(JSONScanner.Failure) in try document.readDraft() }
    }

    /// The value JSON text reads as where a feature's setting would be (`attributeValue`),
    /// or nil when it is not one JSON value: how an OGR JSON column's text is read, so that
    /// a value is the same whichever reader met it.
    static func attributeValue(json text: String) -> AttributeValue?? {
        reading(text, names: []) { document throws(JSONScanner.Failure) in
            var draft = FeatureDraft()
            return try document.attributeValue(from: .property(""), draft: &draft)
        }
    }

    /// What `body` reads from `text`, which must be that one JSON value; nil when it is not.
    private static func reading<T>(_ text: String, names: Set<String>, _ body: (inout GeoJSONDocument) throws(JSONScanner.Failure) -> T) -> T? {
        var text = text
        return text.withUTF8 { bytes in
            var document = GeoJSONDocument(scanner: JSONScanner(bytes), layer: "", options: FenceInputOptions(), settingNames: names)
            do throws(JSONScanner.Failure) {
                let value = try body(&document)
                try document.scanner.expectEnd()
                return value
            } catch {
                return nil
            }
        }
    }

    mutating func readProperties(_ draft: inout FeatureDraft) throws(JSONScanner.Failure) {
        guard scanner.peek() == 123 else {
            let (_, depth) = try scanner.skipValue()  // null, or not an object: no properties
            if depth > options.limits.maxNesting { draft.noteNesting("properties", depth: depth, limit: options.limits.maxNesting) }
            return
        }
        scanner.at += 1
        if scanner.take(125) { return }
        repeat {
            let keyToken = try scanner.string()
            try scanner.expect(58, ":")
            let key: String
            switch scanner.decoded(keyToken) {
            case .success(let k): key = k
            case .failure(let problem):
                draft.noteBadText(problem, in: .propertyName)
                _ = try scanner.skipValue()
                continue
            }
            // Any property given twice is noted: each is a setting or carried to events.
            if settingNames.contains(key) {
                let value = try attributeValue(from: .property(key), draft: &draft)
                if draft.found.updateValue(value, forKey: key) != nil { draft.noteRepeated(key, in: .properties) }
            } else {
                let (range, depth) = try scanner.skipValue()
                if depth > options.limits.maxNesting {
                    draft.noteNesting(key, depth: depth, limit: options.limits.maxNesting)
                } else {
                    switch scanner.checkedCompactText(range) {
                    case .success(let text):
                        // A null property is no property, as through OGR (a null column is unset).
                        let repeated =
                            text == "null"
                            ? !draft.nullProperties.insert(key).inserted || draft.properties[key] != nil
                            : draft.properties.updateValue(text, forKey: key) != nil
                                || (!draft.nullProperties.isEmpty && draft.nullProperties.contains(key))
                        if repeated { draft.noteRepeated(key, in: .properties) }
                    case .failure(let problem):
                        draft.noteBadText(problem, in: .property(key))
                    }
                }
            }
        } while try scanner.next(closing: 125)
    }

    mutating func readGeometry(_ draft: inout FeatureDraft) throws(JSONScanner.Failure) {
        guard scanner.peek() == 123 else {
            _ = try scanner.skipValue()  // null: no geometry
            return
        }
        scanner.at += 1
        draft.hasGeometry = true
        var coordinatesAt: Int?
        if !scanner.take(125) {
            repeat {
                let key = try scanner.string()
                try scanner.expect(58, ":")
                if scanner.equals(key, "type") {
                    draft.noteMember(.geometryType)
                    if scanner.peek() == 34 { draft.geometryType = scanner.text(try scanner.string()) } else { _ = try scanner.skipValue() }
                } else if scanner.equals(key, "coordinates") {
                    draft.noteMember(.coordinates)
                    if let depth = Self.coordinateDepth(draft.geometryType) {
                        var coordinates = GeoJSONCoordinates(depth: depth, limits: options.limits.geometry)
                        try coordinates.read(&scanner)
                        draft.coordinates = coordinates
                    } else {
                        // The type is not known yet (or is no fence): come back once it is.
                        coordinatesAt = scanner.at
                        _ = try scanner.skipValue()
                    }
                } else {
                    _ = try scanner.skipValue()
                }
            } while try scanner.next(closing: 125)
        }
        if let coordinatesAt, let depth = Self.coordinateDepth(draft.geometryType) {
            var again = JSONScanner(scanner.bytes)
            again.at = coordinatesAt
            var coordinates = GeoJSONCoordinates(depth: depth, limits: options.limits.geometry)
            try coordinates.read(&again)
            draft.coordinates = coordinates
        }
    }

    static func coordinateDepth(_ type: String?) -> Int? {
        switch type {
        case "Point": return 1
        case "Polygon": return 3
        case "MultiPolygon": return 4
        default: return nil
        }
    }

    /// Turns a feature's parts into a fence or a rejection.
    mutating func finish(_ draft: FeatureDraft, number: Int) {
        let origin = FeatureOrigin(layer: layer, index: number)
        var name = "#\(number)"
        func reject(_ kind: FenceError.Kind, _ reason: String) {
            result.rejected.append(RejectedFeature(origin: origin, error: FenceError(kind, fence: name, line: number, reason: reason)))
        }
        func reject(_ e: FenceError) { reject(e.kind, e.reason) }
        let fields = options.fields
        // A repeated key (JSON readers differ on which counts) that may hold the id, or the
        // type, refuses the feature before either is read.
        if draft.repeatLeavesIDInDoubt(idNames: fields.id), let reason = draft.repeatedReason { return reject(.malformedInput, reason) }
        guard draft.type == "Feature" else { return reject(.malformedInput, "not a GeoJSON Feature") }
        // Each role takes its first candidate the feature has set: a null or blank one is not
        // set (README "Formats"), so `"group": null, "customID": "c"` is in group c, as OGR
        // reads a null column (an audit found the null hiding the second name).
        var settings = FenceSettings()
        var errors: [FenceFields.Role: FenceError] = [:]
        var idSource: FeatureDraft.Source?
        for role in FenceFields.Role.allCases {
            for candidate in fields[role] {
                guard let found = draft.found[candidate], let value = found, !value.isBlank else { continue }
                if let e = settings.set(role, value, from: "property \"\(candidate)\"") { errors[role] = e }
                if role == .id { idSource = .property(candidate) }
                break
            }
        }
        // A blank feature id is none, as a blank property is (and as OGR reads the column).
        if settings.id == nil, errors[.id] == nil, !fields.named.contains(.id), let fid = draft.featureID {
            if let e = settings.set(.id, fid, from: "the feature id") { errors[.id] = e }
            idSource = .featureID
        }
        // An id that is not text, or not a string or number, cannot name the fence: it is #number.
        if let bad = draft.badText, bad.source == idSource { return reject(.malformedInput, bad.reason) }
        // An id nested too deep reads as "?": the nesting is the reason.
        if let e = errors[.id] { return reject(draft.nesting ?? e) }
        guard let id = settings.id, !id.isEmpty else {
            let names = fields.id.map { "\"\($0)\"" }.joined(separator: " or ")
            return reject(.missingID, fields.named.contains(.id) ? "the feature has no id (property \(names))" : "the feature has no id (property \(names) or feature id)")
        }
        name = id
        if let bad = draft.badText { return reject(.malformedInput, bad.reason) }
        if let reason = draft.repeatedReason { return reject(.malformedInput, reason) }
        if let e = draft.nesting { return reject(e) }
        guard draft.hasGeometry, let type = draft.geometryType else { return reject(.emptyGeometry, "the feature has no geometry") }
        if let e = errors[.coord] { return reject(e) }
        let shape: FenceShape
        switch type {
        case "Point":
            guard let p = draft.coordinates?.point else {
                return reject(.malformedInput, draft.coordinates?.problem ?? "the Point's coordinates are not [lon, lat]")
            }
            if let e = errors[.radius] { return reject(e) }
            guard let radius = settings.radius else {
                return reject(.invalidRadius, "a Point fence needs a \(fields.radius.map { "\"\($0)\"" }.joined(separator: " or ")) property in metres")
            }
            shape = .circle(center: p, radius: radius)
        case "Polygon", "MultiPolygon":
            guard let coordinates = draft.coordinates else {
                return reject(.malformedInput, "\(type) coordinates are missing")
            }
            switch coordinates.polygonValues() {
            case .success(let polygons): shape = .polygons(polygons)
            case .failure(let e): return reject(e)
            }
        default:
            return reject(.malformedInput, "geometry type \(type) cannot be a fence (Polygon, MultiPolygon or Point with radius)")
        }
        for role in [FenceFields.Role.group, .actions, .dwell, .expires] { if let e = errors[role] { return reject(e) } }
        result.fences.append(settings.fence(id: id, shape: shape, defaultCoord: options.coord, properties: draft.properties))
        result.origins.append(origin)
    }
}
