/// One configuration key, declared once: its name, the form its value takes (which checks it and
/// gives the docs' Type column), its default and its doc line. Loading, defaults, the tables in
/// docs/OPERATIONS.md (`--print-config-table`) and the test harnesses' config writers all read
/// this declaration, so adding a key is one entry in its configuration's `keys` plus the property
/// it sets.
package struct ConfigKey<Root> {
    package let name: String
    /// The docs table's Type column.
    package let type: String
    /// What an error says the value must be.
    let expected: String
    /// The default as a file would hold it; nil when the key is required.
    package let defaultValue: JSONValue?
    /// The docs table's Meaning column.
    package let doc: String
    /// Sets the field from a value as written (paths resolved against the directory given);
    /// false when the value does not fit.
    let read: (inout Root, JSONValue, _ workingDirectory: String) -> Bool
    /// The field as a file would hold it.
    let write: (Root) -> JSONValue

    private init(
        name: String, type: String, expected: String, defaultValue: JSONValue?, doc: String,
        read: @escaping (inout Root, JSONValue, String) -> Bool, write: @escaping (Root) -> JSONValue
    ) {
        (self.name, self.type, self.expected, self.defaultValue, self.doc) = (name, type, expected, defaultValue, doc)
        (self.read, self.write) = (read, write)
    }

    /// The same key for a configuration holding this one's `Root` at `field` (a shared group).
    func within<Outer>(_ field: WritableKeyPath<Outer, Root>) -> ConfigKey<Outer> {
        ConfigKey<Outer>(
            name: name, type: type, expected: expected, defaultValue: defaultValue, doc: doc,
            read: { outer, raw, directory in read(&outer[keyPath: field], raw, directory) },
            write: { write($0[keyPath: field]) })
    }

    private init<Value>(
        _ name: String, _ field: WritableKeyPath<Root, Value>, type: String, expected: String,
        default defaultValue: JSONValue?, doc: String, decode: @escaping (JSONValue, String) -> Value?,
        encode: @escaping (Value) -> JSONValue
    ) {
        self.init(
            name: name, type: type, expected: expected, defaultValue: defaultValue, doc: doc,
            read: { root, raw, directory in
                guard let value = decode(raw, directory) else { return false }
                root[keyPath: field] = value
                return true
            }, write: { encode($0[keyPath: field]) })
    }

    /// The docs table's Default column.
    package var defaultText: String { defaultValue.map { "`\($0.json)`" } ?? "required" }

    /// A file or directory path, made absolute: a relative one is resolved against the working
    /// directory `load` was given. Only the text is checked; whether the file exists is the
    /// daemon's business, with its own error.
    package static func path(_ name: String, _ field: WritableKeyPath<Root, String>, doc: String) -> Self {
        Self(
            name, field, type: "path", expected: "a path (a non-empty string)", default: nil, doc: doc,
            decode: { raw, directory in
                guard case .string(let text) = raw, !text.isEmpty, !text.contains("\0") else { return nil }
                return ConfigFile.absolute(text, relativeTo: directory)
            }, encode: { .string($0) })
    }

    /// A `HOST:PORT` address (see `NetworkAddress`).
    package static func address(
        _ name: String, _ field: WritableKeyPath<Root, NetworkAddress>, default defaultValue: String, doc: String
    ) -> Self {
        Self(
            name, field, type: "`HOST:PORT`", expected: ConfigFile.addressForm, default: .string(defaultValue),
            doc: doc,
            decode: { raw, _ in
                guard case .string(let text) = raw else { return nil }
                return NetworkAddress(parsing: text)
            }, encode: { .string($0.description) })
    }

    /// An integer within `range` (a JSON number with no fraction).
    package static func integer(
        _ name: String, _ field: WritableKeyPath<Root, Int>, in range: ClosedRange<Int>, default defaultValue: Int,
        doc: String
    ) -> Self {
        Self(
            name, field, type: "integer, \(range.lowerBound)…\(range.upperBound)",
            expected: "an integer " + rangeText(range), default: .integer(defaultValue), doc: doc,
            decode: { raw, _ in integer(raw, in: range) }, encode: { .integer($0) })
    }

    /// A whole number of `unit`s within `range`, as a `Duration`; `expected` names the unit.
    package static func duration(
        _ name: String, _ field: WritableKeyPath<Root, Duration>, unit: Duration, in range: ClosedRange<Int>,
        default defaultValue: Int, doc: String, expected: String = "an integer"
    ) -> Self {
        Self(
            name, field, type: "integer, \(range.lowerBound)…\(range.upperBound)",
            expected: expected + " " + rangeText(range), default: .integer(defaultValue), doc: doc,
            decode: { raw, _ in integer(raw, in: range).map { unit * $0 } }, encode: { .integer(Int($0 / unit)) })
    }

    /// A whole number of milliseconds within `range` (by default 1 ms to one day), as a `Duration`.
    package static func milliseconds(
        _ name: String, _ field: WritableKeyPath<Root, Duration>, in range: ClosedRange<Int> = 1...86_400_000,
        default defaultValue: Int, doc: String
    ) -> Self {
        duration(
            name, field, unit: .milliseconds(1), in: range, default: defaultValue, doc: doc,
            expected: "a whole number of milliseconds")
    }

    /// One of the raw values of `Choice`, e.g. a `LogLevel`; matching is exact (case-sensitive).
    package static func choice<Choice: RawRepresentable & CaseIterable>(
        _ name: String, _ field: WritableKeyPath<Root, Choice>, default defaultValue: Choice, doc: String
    ) -> Self where Choice.RawValue == String {
        let names = Choice.allCases.map { "\"\($0.rawValue)\"" }
        let type = names.dropLast().map { "`\($0)`" }.joined(separator: ", ") + " or `\(names.last ?? "")`"
        return Self(
            name, field, type: type, expected: "one of " + names.joined(separator: ", "),
            default: .string(defaultValue.rawValue), doc: doc,
            decode: { raw, _ in
                guard case .string(let text) = raw else { return nil }
                return Choice(rawValue: text)
            }, encode: { .string($0.rawValue) })
    }

    private static func integer(_ raw: JSONValue, in range: ClosedRange<Int>) -> Int? {
        guard case .integer(let number) = raw, range.contains(number) else { return nil }
        return number
    }

    private static func rangeText(_ range: ClosedRange<Int>) -> String {
        "from \(range.lowerBound) to \(range.upperBound)"
    }
}

/// A daemon's settings as a strict JSON config file: its keys, each declared once.
package protocol ConfigRecord: Sendable {
    /// Every key the file may contain, in the order the docs list them and errors are checked.
    static var keys: [ConfigKey<Self>] { get }
    /// Placeholders only: `load` and `defaults` set every field from a file or a declared default.
    init()
}

extension ConfigRecord {
    /// Reads and checks the file at `path` (see `ConfigFile.load`); relative paths in it resolve
    /// against `workingDirectory`. An absent key takes its declared default; an absent required
    /// key is refused.
    package static func load(path: String, workingDirectory: String? = nil) throws(ConfigError) -> Self {
        let file = try ConfigFile.load(
            path: path, knownKeys: Set(keys.map(\.name)), workingDirectory: workingDirectory)
        var record = Self()
        for key in keys {
            guard let raw = file.value(key.name) ?? key.defaultValue else {
                throw .missingKey(key: key.name, path: path, expected: key.expected)
            }
            guard key.read(&record, raw, file.workingDirectory) else {
                throw .invalidValue(key: key.name, path: path, expected: key.expected, found: raw.written)
            }
        }
        return record
    }

    /// Every key at its declared default; required fields keep their placeholders.
    package static var defaults: Self {
        var record = Self()
        for key in keys {
            if let value = key.defaultValue { _ = key.read(&record, value, "/") }
        }
        return record
    }

    /// Each key as a file would hold it (JSON text by key), for tools and tests that write one.
    package var entries: [String: String] {
        Dictionary(uniqueKeysWithValues: Self.keys.map { ($0.name, $0.write(self).json) })
    }

    /// The value of the key named `name` as loaded, for scripts (`--print-config`): a string — a
    /// path, already absolute, or an address — as is, anything else as JSON; nil for an unknown name.
    package func value(of name: String) -> String? {
        guard let key = Self.keys.first(where: { $0.name == name }) else { return nil }
        let value = key.write(self)
        if case .string(let text) = value { return text }
        return value.json
    }

    /// The file holding every key, one per line in declaration order.
    package var fileText: String {
        let lines = Self.keys.map { "  \(JSONValue.string($0.name).json): \($0.write(self).json)" }
        return "{\n" + lines.joined(separator: ",\n") + "\n}\n"
    }

    /// The Markdown table docs/OPERATIONS.md shows for this file.
    package static var markdownTable: String {
        let rows = keys.map { "| `\($0.name)` | \($0.type) | \($0.defaultText) | \($0.doc) |" }
        return (["| Key | Type | Default | Meaning |", "|---|---|---|---|"] + rows).joined(separator: "\n")
    }
}

/// The link's tuning keys and its event journal's cap, the same group in both daemons' files (`link` in each).
package struct LinkSettings: Sendable, Equatable {
    package var heartbeatInterval = Duration.zero
    package var missedHeartbeats = 0
    package var handshakeTimeout = Duration.zero
    package var messageReplyTimeout = Duration.zero
    package var maximumFrameBytes = 0
    package var journalMaximumBytes = 0
    package var fileInboxQuotaBytes = 0
    package var receivedFilesQuotaBytes = 0

    /// The group's declarations, for a configuration holding it at `field`.
    static func keys<Root>(at field: WritableKeyPath<Root, LinkSettings>) -> [ConfigKey<Root>] {
        let keys: [ConfigKey<LinkSettings>] = [
            .milliseconds(
                "heartbeatIntervalMilliseconds", \.heartbeatInterval, default: 500,
                doc: "How often an idle link sends a heartbeat."),
            .integer(
                "missedHeartbeats", \.missedHeartbeats, in: 1...1000, default: 4,
                doc: "Heartbeat intervals without any frame before the link is declared dead."),
            .milliseconds(
                "handshakeTimeoutMilliseconds", \.handshakeTimeout, default: 5000,
                doc: "How long a new connection may take to authenticate."),
            .milliseconds(
                "messageReplyTimeoutMilliseconds", \.messageReplyTimeout, default: 5000,
                doc: "How long a message waits for its reply before failing."),
            .integer(
                "maximumFrameBytes", \.maximumFrameBytes, in: 128...16_777_216, default: 1_048_576,
                doc: "The largest link frame accepted or sent."),
            .integer(
                "journalMaximumBytes", \.journalMaximumBytes, in: 0...1_073_741_824, default: 4_194_304,
                doc: "The event journal's size before it rotates (docs/TRACE.md); 0 turns the journal off."),
            .integer(
                "fileInboxQuotaBytes", \.fileInboxQuotaBytes, in: 0...1_099_511_627_776, default: 268_435_456,
                doc:
                    "Room for files arriving and files not yet taken from the inbox; a file that does not fit is refused with insufficientSpace."
            ),
            .integer(
                "receivedFilesQuotaBytes", \.receivedFilesQuotaBytes, in: 0...1_099_511_627_776, default: 268_435_456,
                doc:
                    "Room for the received files the app keeps (<state>/received-files); keeping one removes the oldest until the rest fit."
            ),
        ]
        return keys.map { $0.within(field) }
    }
}
