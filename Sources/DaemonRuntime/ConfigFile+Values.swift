extension ConfigFile {
    /// How `address(_:default:)` describes what it wants.
    static let addressForm =
        "an address \"HOST:PORT\" with a numeric IPv4 host, localhost or a bracketed IPv6 host"
        + " (\"127.0.0.1:7420\", \"localhost:0\", \"[::1]:7420\") and a port from 0 to 65535"

    /// The present value of `key`, the default, or a `missingKey` error describing `expected`.
    private func present<Value>(
        _ key: String, default defaultValue: Value?, expected: String, convert: (JSONValue) -> Value?
    ) throws(ConfigError) -> Value {
        guard let raw = value(key) else {
            guard let defaultValue else { throw .missingKey(key: key, path: path, expected: expected) }
            return defaultValue
        }
        guard let converted = convert(raw) else {
            throw .invalidValue(key: key, path: path, expected: expected, found: raw.written)
        }
        return converted
    }

    /// A non-empty string.
    package func string(_ key: String, default defaultValue: String? = nil) throws(ConfigError) -> String {
        try present(key, default: defaultValue, expected: "a non-empty string") { raw in
            guard case .string(let text) = raw, !text.isEmpty else { return nil }
            return text
        }
    }

    /// A file or directory path, made absolute: a relative one is resolved against
    /// `workingDirectory` (the current directory unless `load` was given another). Only the text is
    /// checked; whether the file exists is the caller's business, with its own error.
    package func path(_ key: String, default defaultValue: String? = nil) throws(ConfigError) -> String {
        let text = try present(key, default: defaultValue, expected: "a path (a non-empty string)") { raw in
            guard case .string(let text) = raw, !text.isEmpty, !text.contains("\0") else { return nil }
            return text
        }
        return Self.absolute(text, relativeTo: workingDirectory)
    }

    /// An integer within `range` (a JSON number with no fraction).
    package func integer(
        _ key: String, in range: ClosedRange<Int>, default defaultValue: Int? = nil
    ) throws(ConfigError) -> Int {
        try present(key, default: defaultValue, expected: Self.integerForm(range)) { raw in
            guard case .integer(let number) = raw, range.contains(number) else { return nil }
            return number
        }
    }

    /// An integer of at least 1 (and at most `maximum`).
    package func positiveInteger(
        _ key: String, maximum: Int = .max, default defaultValue: Int? = nil
    ) throws(ConfigError) -> Int {
        try integer(key, in: 1...maximum, default: defaultValue)
    }

    /// A whole number of milliseconds within `range` (by default 1 ms to one day), as a `Duration`.
    package func milliseconds(
        _ key: String, in range: ClosedRange<Int> = 1...86_400_000, default defaultValue: Int? = nil
    ) throws(ConfigError) -> Duration {
        let count = try present(
            key, default: defaultValue, expected: "a whole number of milliseconds " + Self.rangeText(range)
        ) {
            raw in
            guard case .integer(let number) = raw, range.contains(number) else { return nil }
            return number
        }
        return .milliseconds(count)
    }

    /// A `HOST:PORT` address (see `NetworkAddress`); the default is written the same way.
    package func address(_ key: String, default defaultValue: String? = nil) throws(ConfigError) -> NetworkAddress {
        try present(key, default: defaultValue.flatMap(NetworkAddress.init(parsing:)), expected: Self.addressForm) {
            raw in
            guard case .string(let text) = raw else { return nil }
            return NetworkAddress(parsing: text)
        }
    }

    /// `true` or `false` (not 0/1, not strings).
    package func bool(_ key: String, default defaultValue: Bool? = nil) throws(ConfigError) -> Bool {
        try present(key, default: defaultValue, expected: "true or false") { raw in
            guard case .bool(let value) = raw else { return nil }
            return value
        }
    }

    /// One of the raw values of `Choice`, e.g. a `LogLevel`; matching is exact (case-sensitive).
    package func choice<Choice: RawRepresentable & CaseIterable>(
        _ key: String, default defaultValue: Choice? = nil
    ) throws(ConfigError) -> Choice where Choice.RawValue == String {
        let names = Choice.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        return try present(key, default: defaultValue, expected: "one of \(names)") { raw in
            guard case .string(let text) = raw else { return nil }
            return Choice(rawValue: text)
        }
    }

    /// `path` if absolute, else `directory/path`, without `.` or empty components.
    static func absolute(_ path: String, relativeTo directory: String) -> String {
        let joined = path.hasPrefix("/") ? path : directory + "/" + path
        // ".." is left alone: resolving it lexically is wrong when a component is a symlink.
        let components = joined.split(separator: "/").filter { $0 != "." }
        return "/" + components.joined(separator: "/")
    }

    private static func integerForm(_ range: ClosedRange<Int>) -> String {
        if range == 1...Int.max { return "a positive integer" }
        return "an integer " + rangeText(range)
    }

    private static func rangeText(_ range: ClosedRange<Int>) -> String {
        range.upperBound == .max ? "of at least \(range.lowerBound)" : "from \(range.lowerBound) to \(range.upperBound)"
    }
}
