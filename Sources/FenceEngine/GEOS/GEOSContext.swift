import CGEOS

/// One GEOS context handle, with its own message buffer. Every raw GEOS call of the engine goes
/// through the files in this folder.
///
/// A context is never shared between threads: each worker of a parallel call makes its own
/// (`GEOS_init_r` costs a few microseconds). Geometries made with one context are destroyed with
/// that same context, which is why each `GEOSGeometry` keeps a strong reference to it.
final class GEOSContext {
    let handle: GEOSContextHandle_t
    private let messages: UnsafeMutablePointer<CGEOSMessageBuffer>

    init() {
        // GEOS_init_r returns NULL only when it cannot allocate the context; there is no way to go
        // on without GEOS at all, so this is the one place the engine traps.
        guard let handle = GEOS_init_r() else { fatalError("GEOS_init_r failed: out of memory") }
        self.handle = handle
        messages = .allocate(capacity: 1)
        messages.initialize(to: CGEOSMessageBuffer())
        CGEOS_installHandlers(handle, messages)
    }

    deinit {
        // "GEOS_finish_r: Free the memory associated with a GEOSContextHandle_t when you are
        // finished calling GEOS functions." The handlers point into `messages`, so it goes after.
        GEOS_finish_r(handle)
        messages.deinitialize(count: 1)
        messages.deallocate()
    }

    /// Clears the last message; call before a GEOS call whose failure you want to explain.
    func resetMessage() {
        messages.pointee.hasMessage = 0
    }

    /// The last error or notice GEOS reported on this context since `resetMessage()`.
    var lastMessage: String? {
        guard messages.pointee.hasMessage != 0 else { return nil }
        return withUnsafeBytes(of: &messages.pointee.text) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// The runtime GEOS version string, e.g. "3.11.1-CAPI-1.17.1".
    static var version: String { String(cString: GEOSversion()) }

    /// A GEOS error as a `FenceError`, with GEOS's own message when it left one.
    func failure(_ what: String, fence: String?) -> FenceError {
        FenceError(.geos, fence: fence, reason: "\(what) failed: \(lastMessage ?? "no message from GEOS")")
    }
}
