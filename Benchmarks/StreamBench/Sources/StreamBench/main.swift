import FenceEngine
import FenceNATS
import Foundation

// 4,000 devices on random walks in a 0.5° square with 10,000 circles, one fix a second for
// 600 s; device d sends its last 10 s of fixes when (t + d) % 10 == 9, so sends are staggered
// and every second of event time moves the horizon (lateness 60 s, step 1 s). One JSON line.
var state: UInt64 = 42
func next() -> Double {
    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    return Double(state >> 11) * 0x1p-53
}
let devices = 4000
let seconds = 600
let window = 10
var fences: [Fence] = []
for i in 0..<10_000 { fences.append(.circle(id: "c\(i)", lon: next() * 0.5, lat: next() * 0.5, radius: 100 + next() * 400)) }
var engine = EventEngine()
_ = engine.add(fences, threads: 1)
var position = (0..<devices).map { _ in (next() * 0.5, next() * 0.5) }
var messages: [[Position]] = []
var open = [[Position]](repeating: [], count: devices)
for t in 0..<seconds {
    for d in 0..<devices {
        position[d].0 += (next() - 0.5) * 0.0005
        position[d].1 += (next() - 0.5) * 0.0005
        open[d].append(Position(device: "dev-\(d)", time: 1_700_000_000 + Double(t), lon: position[d].0, lat: position[d].1))
        if (t + d) % window == window - 1 {
            messages.append(open[d])
            open[d] = []
        }
    }
}
let fixes = messages.reduce(0) { $0 + $1.count }
var stream = PartitionStream(engine: engine, lateness: 60, step: 1)
let start = Date()
var events = 0
for (k, m) in messages.enumerated() { events += stream.receive(m, sequence: UInt64(k + 1)).count }
let elapsed = Date().timeIntervalSince(start)
print(
    "{\"fixes\":\(fixes),\"messages\":\(messages.count),\"events\":\(events),\"seconds\":\(String(format: "%.3f", elapsed)),"
        + "\"fixes_per_s\":\(Int(Double(fixes) / elapsed))}")
