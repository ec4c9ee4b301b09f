import DaemonConfiguration
import DaemonRuntime
import Synchronization
import Testing

/// Lines a logger wrote, collected from whichever thread logged them.
final class CollectedLines: Sendable {
    /// A Mutex because loggers may write from several threads at once.
    private let lines = Mutex<[String]>([])

    /// The sink to give a `Logger`.
    var sink: @Sendable (String) -> Void { { line in self.lines.withLock { $0.append(line) } } }
    /// Everything written so far.
    var values: [String] { lines.withLock { $0 } }
}

@Suite("Logger: one logfmt line per event")
struct LoggerTests {
    /// 2026-11-29T20:31:01.123Z.
    static let instant: Duration = .seconds(1_795_984_261) + .milliseconds(123)

    @Test("a line has ts, level, component, msg and metadata in the order given")
    func format() {
        let lines = CollectedLines()
        let logger = Logger(component: "link", sink: lines.sink, wallClock: { Self.instant })
        logger.info("link established", ["peer": "127.0.0.1:7420", "generation": 7])
        #expect(
            lines.values == [
                #"ts=2026-11-29T20:31:01.123Z level=info component=link msg="link established" peer=127.0.0.1:7420 generation=7"#
            ])
    }

    @Test("keys keep letters, digits, _ . and -; anything else becomes _, and an empty key is _")
    func keys() {
        let line = Logger.line(
            time: Self.instant, level: .warning, component: "a b", message: "m",
            metadata: [("a b", "1"), ("é", "2"), ("", "3"), ("ok_.-9Z", "4"), ("x=y", "5")])
        #expect(
            line == #"ts=2026-11-29T20:31:01.123Z level=warning component="a b" msg=m a_b=1 _=2 _=3 ok_.-9Z=4 x_y=5"#)
    }

    @Test("timestamps are UTC with zero-padded milliseconds")
    func timestamps() {
        #expect(Logger.timestamp(.zero) == "1970-01-01T00:00:00.000Z")
        #expect(Logger.timestamp(.seconds(951_782_400) + .milliseconds(7)) == "2000-02-29T00:00:00.007Z")
        #expect(Logger.timestamp(Self.instant) == "2026-11-29T20:31:01.123Z")
    }

    @Test(
        "values with spaces, quotes, equals signs, backslashes or control characters are quoted and escaped",
        arguments: [
            ("plain", "plain"), ("", #""""#), ("two words", #""two words""#), (#"say "hi""#, #""say \"hi\"""#),
            ("a=b", #""a=b""#), (#"C:\dir"#, #""C:\\dir""#), ("line\nbreak", #""line\nbreak""#),
            ("tab\there", #""tab\there""#), ("bell\u{7}", #""bell\u0007""#), ("café", "café"),
            ("del\u{7F}", #""del\u007f""#), ("\u{1F}\r", #""\u001f\r""#), ("é \"💪🏽\"", #""é \"💪🏽\"""#),
        ])
    func quoting(value: String, written: String) {
        #expect(Logger.quoted(value) == written)
    }

    @Test("lines below the minimum level are dropped; the level is shared by derived loggers")
    func levelFilter() {
        let lines = CollectedLines()
        let root = Logger(component: "phoned", minimumLevel: .notice, sink: lines.sink, wallClock: { .zero })
        let admin = root.withComponent("admin")
        root.debug("hidden")
        admin.info("hidden too")
        admin.notice("shown")
        root.error("failed", ["error": "disk full"])
        #expect(!root.isEnabled(.info) && root.isEnabled(.warning))
        root.minimumLevel = .debug
        admin.debug("now visible")
        #expect(
            lines.values == [
                #"ts=1970-01-01T00:00:00.000Z level=notice component=admin msg=shown"#,
                #"ts=1970-01-01T00:00:00.000Z level=error component=phoned msg=failed error="disk full""#,
                #"ts=1970-01-01T00:00:00.000Z level=debug component=admin msg="now visible""#,
            ])
    }

    @Test("a filtered line's message is never built")
    func lazyMessage() {
        let built = Mutex(false)
        let logger = Logger(component: "x", minimumLevel: .error, sink: { _ in }, wallClock: { .zero })
        func expensive() -> String {
            built.withLock { $0 = true }
            return "expensive"
        }
        logger.debug(expensive())
        #expect(built.withLock { $0 } == false)
    }

    @Test("lines logged from many threads at once are all whole")
    func concurrentLogging() async {
        let lines = CollectedLines()
        let logger = Logger(component: "load", sink: lines.sink, wallClock: { .zero })
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<100 { logger.info("event", ["task": task, "index": index]) }
                }
            }
        }
        #expect(lines.values.count == 800)
        #expect(lines.values.allSatisfy { $0.hasPrefix("ts=") && $0.contains("msg=event task=") })
    }

    @Test("log levels order from debug to error and parse from config names")
    func levels() {
        #expect(LogLevel.allCases == [.debug, .info, .notice, .warning, .error])
        #expect(LogLevel.debug < .info && LogLevel.warning < .error)
        #expect(LogLevel(rawValue: "warning") == .warning)
    }
}
