import Foundation
import LinkProtocol
import POSIX
import Synchronization
import Trace

/// A daemon's event journal (docs/TRACE.md): `journal.jsonl` in the state directory, one JSON line per
/// event, rotated to `journal.jsonl.1` when it passes `maximumBytes` (so at most twice that on disk).
///
/// Cheap on purpose: one `write(2)` per line on an `O_APPEND` descriptor, never an fsync. A line is in
/// the kernel once `record` returns, so it survives the daemon being killed, not a power cut. A
/// failed write is dropped (counted in `droppedLines`): the journal never stops the daemon.
///
/// It also counts events by kind for `metrics`, even with the file turned off (`maximumBytes` 0).
package final class EventJournal: Sendable {
    package static let fileName = "journal.jsonl"
    package static let defaultMaximumBytes = 4 << 20

    package let path: String
    package let side: TraceEvent.Side
    package let instance: String
    package let maximumBytes: Int
    private let origin = ContinuousClock.now
    private struct State {
        var file: FileDescriptor?
        var size = 0
        var dropped = 0
        var counts: [TraceEventKind: Int] = [:]
    }
    private let state = Mutex(State())

    package init(
        stateDirectory: String, role: LinkRole, instance: InstanceID, maximumBytes: Int = defaultMaximumBytes
    ) {
        path = "\(stateDirectory)/\(Self.fileName)"
        side = role == .phone ? .phone : .watch
        self.instance = instance.description
        self.maximumBytes = maximumBytes
    }

    /// How many events of each kind were recorded since the daemon started.
    package var counts: [TraceEventKind: Int] { state.withLock { $0.counts } }

    /// Lines that could not be written.
    package var droppedLines: Int { state.withLock { $0.dropped } }

    /// When an event happened: wall and monotonic microseconds.
    package struct Stamp: Sendable {
        let wall: Int64
        let mono: Int64
    }

    /// Now, for an event recorded later (a decision whose ids are known only once it was carried out).
    package func stamp() -> Stamp {
        Stamp(wall: Self.wallMicros(), mono: Self.micros(ContinuousClock.now - origin))
    }

    /// Appends one event stamped `at` (default: now).
    package func record(
        _ event: TraceEventKind, cause: String? = nil, run: String? = nil, detail: String? = nil, at: Stamp? = nil
    ) {
        state.withLock { $0.counts[event, default: 0] += 1 }
        guard maximumBytes > 0 else { return }
        let stamp = at ?? stamp()
        var bytes = TraceEvent(
            side: side, instance: instance, wall: stamp.wall, mono: stamp.mono, event: event, cause: cause, run: run,
            detail: detail
        ).jsonLineBytes()
        bytes.append(UInt8(ascii: "\n"))
        state.withLock { state in
            if state.file == nil { open(&state) }
            if state.size > 0, state.size + bytes.count > maximumBytes {
                state.file = nil
                try? FileSystem.rename(path, to: path + ".1")
                open(&state)
            }
            if let file = state.file, (try? file.write(bytes)) != nil {
                state.size += bytes.count
            } else {
                state.dropped += 1
            }
        }
    }

    /// Every event in the rotated and the current file, oldest first.
    package static func read(stateDirectory: String) -> [TraceEvent] {
        let base = "\(stateDirectory)/\(fileName)"
        return [base + ".1", base].flatMap { file -> [TraceEvent] in
            guard let data = FileManager.default.contents(atPath: file) else { return [] }
            return TraceEvent.parseLines(String(decoding: data, as: UTF8.self))
        }
    }

    /// Opens the file for appending (at start-up, after a rotation or a failure).
    private func open(_ state: inout State) {
        state.file = try? FileDescriptor(opening: path, [.writeOnly, .create, .append], mode: 0o600)
        state.size = (try? state.file?.status().size) ?? 0
    }

    private static func micros(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
    }

    /// Now, in microseconds since the Unix epoch (the journal's `wall`).
    package static func wallMicros() -> Int64 {
        micros(SystemClock.realTime())
    }
}
