import Trace

/// A log line; the shell adds the time and filters by level.
package struct LogLine: Equatable, Sendable {
    package enum Level: Sendable { case debug, info, notice, warning, error }
    package var level: Level
    package var component: String
    package var message: String
    package var fields: [Field]

    package struct Field: Equatable, Sendable {
        package var key: String
        package var value: String
    }

    package init(_ level: Level, _ component: String, _ message: String, _ fields: [(String, String)] = []) {
        self.level = level
        self.component = component
        self.message = message
        self.fields = fields.map { Field(key: $0.0, value: $0.1) }
    }

    /// The value logged for `key`, for tests.
    package subscript(key: String) -> String? { fields.first { $0.key == key }?.value }
}

/// One journal event a node decided (the link records its frames itself).
package struct JournalEntry: Equatable, Sendable {
    package var kind: TraceEventKind
    package var cause: String?
    package var run: String?
    package var detail: String?

    package init(_ kind: TraceEventKind, cause: String? = nil, run: String? = nil, detail: String? = nil) {
        self.kind = kind
        self.cause = cause
        self.run = run
        self.detail = detail
    }
}
