import Foundation

/// Throughput against fence count, one line per series, as a self-contained SVG: a log
/// x axis (fence counts span decades), a linear y axis from zero, a legend. No outside package.
struct Plot {
    struct Series {
        var label: String
        /// Dashed: a ceiling (the R-tree probe alone) rather than a measured pipeline.
        var dashed = false
        var points: [(fences: Int, perSecond: Double)] = []
    }

    var title: String
    var series: [Series] = []

    mutating func add(_ label: String, dashed: Bool = false, fences: Int, perSecond: Double) {
        if let i = series.firstIndex(where: { $0.label == label }) {
            series[i].points.append((fences, perSecond))
        } else {
            series.append(Series(label: label, dashed: dashed, points: [(fences, perSecond)]))
        }
    }

    func svg() -> String {
        let width = 1040.0
        let height = 560.0
        let left = 80.0
        let right = 360.0
        let top = 50.0
        let bottom = 60.0
        let all = series.flatMap(\.points)
        let minN = Double(all.map(\.fences).min() ?? 1)
        let maxN = Double(all.map(\.fences).max() ?? 10)
        let lo = log10(max(1, minN))
        let hi = max(lo + 1, log10(max(1, maxN)))
        let yMax = niceCeiling((all.map(\.perSecond).max() ?? 1) * 1.05)
        let plotW = width - left - right
        let plotH = height - top - bottom
        func x(_ n: Int) -> Double { left + (log10(Double(max(1, n))) - lo) / (hi - lo) * plotW }
        func y(_ v: Double) -> Double { top + plotH - v / yMax * plotH }
        let palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"]

        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(left)" y="28" font-size="16" font-weight="bold">\(escape(title))</text>

            """
        // Grid and axes.
        for k in 0...5 {
            let v = yMax * Double(k) / 5
            out += "<line x1=\"\(f(left))\" y1=\"\(f(y(v)))\" x2=\"\(f(left + plotW))\" y2=\"\(f(y(v)))\" stroke=\"#ddd\"/>\n"
            out += "<text x=\"\(f(left - 8))\" y=\"\(f(y(v) + 4))\" text-anchor=\"end\">\(rate(v))</text>\n"
        }
        var decade = Int(lo.rounded(.down))
        while Double(decade) <= hi + 1e-9 {
            let n = Int(pow(10, Double(decade)))
            if Double(decade) >= lo - 1e-9 {
                out += "<line x1=\"\(f(x(n)))\" y1=\"\(f(top))\" x2=\"\(f(x(n)))\" y2=\"\(f(top + plotH))\" stroke=\"#ddd\"/>\n"
                out += "<text x=\"\(f(x(n)))\" y=\"\(f(top + plotH + 18))\" text-anchor=\"middle\">\(count(n))</text>\n"
            }
            decade += 1
        }
        out += "<rect x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(plotW))\" height=\"\(f(plotH))\" fill=\"none\" stroke=\"#333\"/>\n"
        out += "<text x=\"\(f(left + plotW / 2))\" y=\"\(f(height - 16))\" text-anchor=\"middle\">fences (log scale)</text>\n"
        out += "<text transform=\"translate(20 \(f(top + plotH / 2))) rotate(-90)\" text-anchor=\"middle\">per second</text>\n"
        // Lines and the legend.
        for (i, s) in series.enumerated() {
            let color = palette[i % palette.count]
            let points = s.points.sorted { $0.fences < $1.fences }
            let path = points.map { "\(f(x($0.fences))),\(f(y($0.perSecond)))" }.joined(separator: " ")
            let dash = s.dashed ? " stroke-dasharray=\"6 4\"" : ""
            out += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"\(dash)/>\n"
            for p in points {
                out += "<circle cx=\"\(f(x(p.fences)))\" cy=\"\(f(y(p.perSecond)))\" r=\"3.5\" fill=\"\(color)\">"
                out += "<title>\(escape(s.label)): \(count(p.fences)) fences, \(rate(p.perSecond))/s</title></circle>\n"
            }
            let ly = top + 10 + Double(i) * 20
            out += "<line x1=\"\(f(left + plotW + 16))\" y1=\"\(f(ly))\" x2=\"\(f(left + plotW + 44))\" y2=\"\(f(ly))\" stroke=\"\(color)\" stroke-width=\"2\"\(dash)/>\n"
            out += "<text x=\"\(f(left + plotW + 50))\" y=\"\(f(ly + 4))\">\(escape(s.label))</text>\n"
        }
        out += "</svg>\n"
        return out
    }

    private func f(_ v: Double) -> String { String(format: "%.1f", v) }

    private func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    private func rate(_ v: Double) -> String {
        v >= 1e6 ? String(format: "%.1fM", v / 1e6) : v >= 1e3 ? String(format: "%.0fk", v / 1e3) : String(format: "%.0f", v)
    }

    private func count(_ n: Int) -> String {
        n >= 1_000_000 ? "\(n / 1_000_000)M" : n >= 1000 ? "\(n / 1000)k" : "\(n)"
    }

    /// 1, 2 or 5 times a power of ten, at least `v`.
    private func niceCeiling(_ v: Double) -> Double {
        guard v > 0 else { return 1 }
        let p = pow(10, log10(v).rounded(.down))
        for m in [1.0, 2, 5, 10] where m * p >= v { return m * p }
        return 10 * p
    }
}
