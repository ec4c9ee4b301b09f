import DaemonConfiguration
import POSIX
import Synchronization
import Trace

/// Structured logging: one logfmt line per event, by default on stderr (where journald picks it up).
///
/// ```
/// ts=2026-11-29T20:31:01.123Z level=info component=link msg="link established" peer=127.0.0.1:7420
/// ```
///
/// `ts` is UTC with milliseconds; values with spaces, quotes, `=`, backslashes or control
/// characters are quoted and escaped (`\"`, `\\`, `\n`), so a line is always one line and always
/// splits back into the same pairs. Loggers made with `withComponent(_:)` share one output, so
/// their minimum level changes together (a SIGHUP reload) and their lines never interleave.
package struct Logger: Sendable {
    /// What goes in `component=`: the part of the daemon speaking (`link`, `admin`, `store`).
    package let component: String
    private let output: LogOutput

    /// A logger for `component` writing lines at or above `minimumLevel` to `sink` (stderr by
    /// default), stamped with `wallClock` (time since the Unix epoch; the real clock by default).
    package init(
        component: String, minimumLevel: LogLevel = .info,
        sink: @escaping @Sendable (String) -> Void = Logger.writeToStandardError,
        wallClock: @escaping @Sendable () -> Duration = Logger.systemWallClock
    ) {
        self.component = component
        output = LogOutput(minimumLevel: minimumLevel, sink: sink, wallClock: wallClock)
    }

    private init(component: String, output: LogOutput) {
        self.component = component
        self.output = output
    }

    /// A logger for another component sharing this one's output and level.
    package func withComponent(_ component: String) -> Logger {
        Logger(component: component, output: output)
    }

    /// The level below which lines are dropped, for every logger sharing this output.
    package var minimumLevel: LogLevel {
        get { output.state.withLock { $0.minimumLevel } }
        nonmutating set { output.state.withLock { $0.minimumLevel = newValue } }
    }

    /// Whether a line at `level` would be written (to skip building expensive metadata).
    package func isEnabled(_ level: LogLevel) -> Bool {
        level >= minimumLevel
    }

    /// Writes one line at `level` with `message` and `metadata` (in the order given), unless filtered.
    package func log(
        _ level: LogLevel, _ message: @autoclosure () -> String,
        _ metadata: KeyValuePairs<String, any CustomStringConvertible> = [:]
    ) {
        output.state.withLock { state in
            guard level >= state.minimumLevel else { return }
            let pairs = metadata.map { ($0.key, $0.value.description) }
            state.sink(
                Self.line(
                    time: state.wallClock(), level: level, component: component, message: message(), metadata: pairs))
        }
    }

    /// Writes one line at `level` with `fields` (in the order given), unless filtered.
    package func log(_ level: LogLevel, _ message: String, fields: [(String, String)]) {
        output.state.withLock { state in
            guard level >= state.minimumLevel else { return }
            state.sink(
                Self.line(
                    time: state.wallClock(), level: level, component: component, message: message, metadata: fields))
        }
    }

    /// Logs at `debug`.
    package func debug(
        _ message: @autoclosure () -> String, _ metadata: KeyValuePairs<String, any CustomStringConvertible> = [:]
    ) {
        log(.debug, message(), metadata)
    }

    /// Logs at `info`.
    package func info(
        _ message: @autoclosure () -> String, _ metadata: KeyValuePairs<String, any CustomStringConvertible> = [:]
    ) {
        log(.info, message(), metadata)
    }

    /// Logs at `notice`.
    package func notice(
        _ message: @autoclosure () -> String, _ metadata: KeyValuePairs<String, any CustomStringConvertible> = [:]
    ) {
        log(.notice, message(), metadata)
    }

    /// Logs at `warning`.
    package func warning(
        _ message: @autoclosure () -> String, _ metadata: KeyValuePairs<String, any CustomStringConvertible> = [:]
    ) {
        log(.warning, message(), metadata)
    }

    /// Logs at `error`.
    package func error(
        _ message: @autoclosure () -> String, _ metadata: KeyValuePairs<String, any CustomStringConvertible> = [:]
    ) {
        log(.error, message(), metadata)
    }

    /// One formatted line, without the trailing newline.
    package static func line(
        time: Duration, level: LogLevel, component: String, message: String, metadata: [(String, String)]
    ) -> String {
        var line = "ts="
        line.reserveCapacity(
            96 + message.utf8.count + metadata.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 2 })
        line += timestamp(time)
        line += " level="
        line += level.rawValue
        line += " component="
        line += quoted(component)
        line += " msg="
        line += quoted(message)
        for (key, value) in metadata {
            line += " "
            line += sanitizedKey(key)
            line += "="
            line += quoted(value)
        }
        return line
    }

    /// `2026-11-29T20:31:01.123Z` for `time` since the Unix epoch.
    package static func timestamp(_ time: Duration) -> String {
        let (seconds, attoseconds) = time.components
        return TraceTime.iso8601(micros: seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
    }

    /// `value` as is when it is a bare token, else in double quotes with `\`, `"` and control characters escaped.
    package static func quoted(_ value: String) -> String {
        // By bytes: every scalar that needs quotes is ASCII, and an ASCII byte is always its own scalar.
        let needsQuotes =
            value.isEmpty
            || value.utf8.contains {
                $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "=")
                    || $0 == UInt8(ascii: "\\")
            }
        guard needsQuotes else { return value }
        // Built as bytes (a scalar at a time cost more than the rest of the line): every byte escaped
        // is ASCII, and the others, multi-byte scalars included, are copied as they are.
        var escaped: [UInt8] = []
        escaped.reserveCapacity(value.utf8.count + 8)
        TraceEvent.appendQuoted(value, to: &escaped, escapingDelete: true) { byte in
            switch byte {
            case UInt8(ascii: "\n"): UInt8(ascii: "n")
            case UInt8(ascii: "\r"): UInt8(ascii: "r")
            case UInt8(ascii: "\t"): UInt8(ascii: "t")
            default: nil
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    /// A key made safe for logfmt: anything but letters, digits, `_`, `.` and `-` becomes `_`.
    private static func sanitizedKey(_ key: String) -> String {
        let isSafe: (UInt8) -> Bool = {
            switch $0 {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
                true
            default: false
            }
        }
        if !key.isEmpty, key.utf8.allSatisfy(isSafe) { return key }
        let safe = String(
            key.map { $0.isASCII && ($0.isLetter || $0.isNumber || "_.-".contains($0)) ? $0 : "_" })
        return safe.isEmpty ? "_" : safe
    }

    /// Writes `line` and a newline to stderr in one `write` where possible (retrying short writes).
    package static let writeToStandardError: @Sendable (String) -> Void = { line in
        StandardStream.error.write(line + "\n")
    }

    /// The real-time clock (`CLOCK_REALTIME`) as time since the Unix epoch.
    package static let systemWallClock: @Sendable () -> Duration = { SystemClock.realTime() }
}

/// The state every logger derived from one `Logger.init` shares.
private final class LogOutput: Sendable {
    struct State {
        var minimumLevel: LogLevel
        let sink: @Sendable (String) -> Void
        let wallClock: @Sendable () -> Duration
    }

    /// A Mutex because any thread may log or change the level; holding it across the sink call also
    /// keeps two threads' lines from interleaving inside one write.
    let state: Mutex<State>

    init(
        minimumLevel: LogLevel, sink: @escaping @Sendable (String) -> Void,
        wallClock: @escaping @Sendable () -> Duration
    ) {
        state = Mutex(State(minimumLevel: minimumLevel, sink: sink, wallClock: wallClock))
    }
}

extension Logger {
    /// Logs at `level` as `component` (a daemon's subsystems share one sink and level).
    package func log(
        _ level: LogLevel, _ message: String, _ metadata: KeyValuePairs<String, any CustomStringConvertible> = [:],
        component: String
    ) {
        withComponent(component).log(level, message, metadata)
    }

    package func info(
        _ message: String, _ metadata: KeyValuePairs<String, any CustomStringConvertible> = [:], component: String
    ) {
        log(.info, message, metadata, component: component)
    }

    package func notice(
        _ message: String, _ metadata: KeyValuePairs<String, any CustomStringConvertible> = [:], component: String
    ) {
        log(.notice, message, metadata, component: component)
    }

    package func warning(
        _ message: String, _ metadata: KeyValuePairs<String, any CustomStringConvertible> = [:], component: String
    ) {
        log(.warning, message, metadata, component: component)
    }

    package func error(
        _ message: String, _ metadata: KeyValuePairs<String, any CustomStringConvertible> = [:], component: String
    ) {
        log(.error, message, metadata, component: component)
    }
}
