import FenceIO

/// Bad position lines, as every command that reads positions treats them (`eval`, `contains`,
/// `nearest`, `publish`): each is skipped and counted, and reported on standard error with its
/// line number (the first 100 of a batch, then how many more); once more than `--max-bad` of
/// the lines read so far are bad, counting at least `judgedFrom` lines, the command stops with
/// exit status 1 (by default: an 11th bad line within the first 1,000 lines, then more than
/// 1%), judged at each bad line's number, so the same input stops or not however it is cut
/// into batches; and so it does at the input's end when no line at all was good. `--max-bad 1`
/// never stops. A few bad lines in a large file or a small one do not fail the run; a file of
/// the wrong kind stops it at its first batch.
/// Where it stops: `contains`, `nearest` and `publish` finish the batch in which the share was
/// passed (its good lines are written or published) and read no further; `eval` does not
/// evaluate that batch (a half-applied batch would leave events without their state).
struct BadLines {
    let path: String
    /// `--max-bad`: the share of lines that may be bad (0...1, default 0.01).
    let maxShare: Double
    /// Lines read (good and bad).
    private(set) var read = 0
    /// Lines refused (by the reader, and whatever the caller adds).
    private(set) var rejected = 0
    /// True once the share was passed: the caller stops and exits 1.
    private(set) var exceeded = false

    static let option = "max-bad"
    /// The option's lines for a command's `--help`, descriptions starting at `column`.
    static func help(column: Int) -> String {
        let name = "  --max-bad SHARE"
        let pad = String(repeating: " ", count: column)
        return name + String(repeating: " ", count: max(1, column - name.count))
            + "stop with exit status 1 once more than this share of lines\n" + pad
            + "(of at least 1,000) is bad (default 0.01), or when no line\n" + pad
            + "is good (unless 1); bad lines are reported and skipped"
    }

    init(_ a: Arguments, path: String) throws {
        self.path = path
        maxShare = try a.double(Self.option, default: 0.01)!
        guard (0...1).contains(maxShare) else { throw UsageError("--max-bad must be a share between 0 and 1") }
    }

    /// The fewest lines the share is taken of: a live feed's first batches can be a line or
    /// two (`--max-wait`), and one bad line among them, or a stray one in a file of 20 lines,
    /// is not a file of the wrong kind.
    static let judgedFrom = 1000

    /// Takes one batch's count of good lines and its bad lines (and `refused`, lines read and
    /// refused after parsing, such as fixes past `--max-lead`): reports them, and returns
    /// false (having said so) when the bad lines are now more than `--max-bad` of the lines
    /// read or of `judgedFrom`, whichever is more (`exceeded`), or when the input ended
    /// (`final`) with every line bad.
    @discardableResult
    mutating func take(good: Int, errors: [PositionLineError], refused: Int = 0, final: Bool) -> Bool {
        let stderr = StandardError()
        for e in errors.prefix(100) { stderr.write("fence: \(path): \(e)\n") }
        if errors.count > 100 { stderr.write("fence: \(path): \(errors.count - 100) more bad lines in this batch\n") }
        let before = rejected
        rejected += errors.count + refused
        read += good + errors.count + refused
        guard rejected > 0, !exceeded, maxShare < 1 else { return !exceeded }
        // Each bad line is judged at its own line number (the lines read up to it), so whether
        // a run stops does not depend on how the input was cut into batches (a file read whole
        // and the same bytes down a live pipe: a review).
        var count = before
        for line in errors.map(\.line).sorted() {
            count += 1
            if Double(count) > maxShare * Double(max(line, Self.judgedFrom)) {
                stderr.write("fence: \(path): \(count) of the first \(line) lines are bad, more than --max-bad \(maxShare); stopping\n")
                exceeded = true
                return false
            }
        }
        // Lines refused after reading (`--max-lead`) carry no number: judged with the batch.
        if refused > 0 && Double(rejected) > maxShare * Double(max(read, Self.judgedFrom)) {
            stderr.write("fence: \(path): \(rejected) of \(read) lines are bad, more than --max-bad \(maxShare); stopping\n")
            exceeded = true
        } else if final && rejected == read {
            stderr.write("fence: \(path): \(rejected) of \(read) lines are bad, none good; stopping\n")
            exceeded = true
        }
        return !exceeded
    }

    /// Counts lines refused after reading (fixes the engine rejects), which `take` did not see.
    mutating func addRejected(_ n: Int) { rejected += n }
}
