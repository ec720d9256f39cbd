// A fleet's fixes as a CSV stream on standard output, for the soak test (compiled by soak.sh
// with `swiftc -O`; no dependency on the project).
//
//   FixStream COUNT DEVICES
//
// COUNT fixes of DEVICES devices (a bounded population), round after round: in each round every
// device reports once, 30 s after its previous fix, after a random step of up to about 60 m on
// a walk kept inside [0, 1] x [0, 1] degrees (the fences of `gen.awk`). Seeded: the same
// arguments give the same bytes.
#if canImport(Glibc)
import Glibc
#endif

let args = CommandLine.arguments
guard args.count == 3, let count = Int(args[1]), let devices = Int(args[2]), count >= 0, devices > 0 else {
    fputs("usage: FixStream COUNT DEVICES\n", stderr)
    exit(2)
}
var state: UInt64 = 0x9E37_79B9_7F4A_7C15
@inline(__always) func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
}
// Positions in micro-degrees.
var lon = [Int](repeating: 0, count: devices)
var lat = [Int](repeating: 0, count: devices)
for d in 0..<devices {
    lon[d] = Int(next() % 1_000_000)
    lat[d] = Int(next() % 1_000_000)
}
var out = [UInt8]()
out.reserveCapacity(1 << 20)
func flush() {
    var offset = 0
    out.withUnsafeBytes { raw in
        while offset < raw.count {
            let n = write(1, raw.baseAddress! + offset, raw.count - offset)
            if n <= 0 { exit(0) }  // the reader went away
            offset += n
        }
    }
    out.removeAll(keepingCapacity: true)
}
@inline(__always) func put(_ v: Int) {
    var v = v
    if v < 0 {
        out.append(45)
        v = -v
    }
    var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    var n = 0
    withUnsafeMutableBytes(of: &digits) { buf in
        repeat {
            buf[n] = UInt8(48 + v % 10)
            v /= 10
            n += 1
        } while v > 0
        for k in stride(from: n - 1, through: 0, by: -1) { out.append(buf[k]) }
    }
}
@inline(__always) func putMicro(_ v: Int) {
    put(v / 1_000_000)
    out.append(46)
    let f = v % 1_000_000
    var scale = 100_000
    while scale > 0 {
        out.append(UInt8(48 + f / scale % 10))
        scale /= 10
    }
}
out.append(contentsOf: Array("device,time,lon,lat\n".utf8))
let t0 = 1_700_000_000
for k in 0..<count {
    let d = k % devices
    let round = k / devices
    let r = next()
    lon[d] = min(999_999, max(0, lon[d] + Int(r & 1023) - 512))
    lat[d] = min(999_999, max(0, lat[d] + Int((r >> 10) & 1023) - 512))
    out.append(118)  // v
    put(d)
    out.append(44)
    put(t0 + round * 30 + d % 30)
    out.append(44)
    putMicro(lon[d])
    out.append(44)
    putMicro(lat[d])
    out.append(10)
    if out.count >= 1 << 20 { flush() }
}
flush()
