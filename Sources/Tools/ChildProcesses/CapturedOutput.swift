import Foundation
import Glibc
import Synchronization

/// What a child wrote to its captured streams: one plain thread drains their pipes with `poll`
/// into memory until each reaches end of file, then closes it.
///
/// A blocking thread and not DispatchIO or a `FileHandle` readability handler: Dispatch sources on
/// descriptors are what Foundation's `Process` and `Pipe` use on Linux, and the test runner crashed
/// inside libdispatch's event loop with them. The bytes are kept raw and decoded on each read, so a
/// UTF-8 character split across two reads is never garbled.
final class CapturedOutput: Sendable {
    private struct Buffers {
        var standardOutput: [UInt8] = []
        var standardError: [UInt8] = []
        /// Streams that have not reached end of file yet.
        var open: Int
    }

    /// Shared between the reader thread, which appends, and whoever reads the text (hence the Mutex).
    private let buffers: Mutex<Buffers>

    /// Takes ownership of the read ends (either may be absent) and starts the reader thread.
    init(standardOutput: Int32?, standardError: Int32?) {
        let streams =
            [(standardOutput, false), (standardError, true)]
            .compactMap { descriptor, isError in descriptor.map { (descriptor: $0, isError: isError) } }
        buffers = Mutex(Buffers(open: streams.count))
        Thread.detachNewThread { [self] in drain(streams) }
    }

    /// Everything written to stdout so far.
    var standardOutput: String { buffers.withLock { String(decoding: $0.standardOutput, as: UTF8.self) } }
    /// Everything written to stderr so far.
    var standardError: String { buffers.withLock { String(decoding: $0.standardError, as: UTF8.self) } }
    /// Whether every captured stream has reached end of file: nothing more will arrive.
    var isFinished: Bool { buffers.withLock { $0.open == 0 } }

    private func drain(_ streams: [(descriptor: Int32, isError: Bool)]) {
        var pending = streams
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while !pending.isEmpty {
            var entries = pending.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
            if poll(&entries, nfds_t(entries.count), -1) < 0 {
                if errno == EINTR { continue }
                break  // cannot happen with valid descriptors; give up rather than spin
            }
            var ended: Set<Int32> = []
            for (entry, stream) in zip(entries, pending) where entry.revents != 0 {
                let count = chunk.withUnsafeMutableBytes { read(stream.descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    buffers.withLock { buffers in
                        if stream.isError {
                            buffers.standardError.append(contentsOf: chunk[0..<count])
                        } else {
                            buffers.standardOutput.append(contentsOf: chunk[0..<count])
                        }
                    }
                } else if count == 0 || errno != EINTR {
                    ended.insert(stream.descriptor)
                }
            }
            for descriptor in ended { close(descriptor) }
            pending.removeAll { ended.contains($0.descriptor) }
            buffers.withLock { $0.open = pending.count }
        }
        for stream in pending { close(stream.descriptor) }
        buffers.withLock { $0.open = 0 }
    }
}
