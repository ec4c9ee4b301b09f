/// A run's JSON written by hand: the bytes `JSONEncoder` gives with sorted keys, several times faster.
///
/// Each type writes what its synthesized `Encodable` encodes (every stored property, nil optionals left
/// out; `Timestamp`, `Stamp` and `DocumentID` as strings of their `description`, the enums as their raw
/// values), its keys in `JSONEncoder`'s order (by their UTF-8 bytes). `RunEncodingTests` holds the
/// result to `JSONEncoder`'s bytes, compact and pretty, for random runs and edge values alike; a field
/// added to any of these types must be added here too, and those tests fail until it is.
extension WorkoutDocument {
    /// The bytes `JSONEncoder` gives for this run with sorted keys (and pretty printing when `pretty`),
    /// written by hand: `DocumentCoder.encodeCompact(self)` or `encodeForDisk(self)`, byte for byte.
    package func encodedJSON(pretty: Bool) -> [UInt8] {
        var writer = DocumentJSONWriter(pretty: pretty, capacity: 512 + 320 * logs.count + 192 * totalSetCount)
        writer.openObject()
        writer.key("currentStateIndex")
        writer.int(currentStateIndex)
        if let endedAt {
            writer.key("endedAt")
            writer.time(endedAt)
        }
        writer.key("ending")
        ending.write(to: &writer)
        writer.key("id")
        writer.id(id)
        writer.key("logs")
        writer.openArray()
        for log in logs {
            writer.element()
            log.write(to: &writer)
        }
        writer.closeArray()
        if let metrics {
            writer.key("metrics")
            metrics.write(to: &writer)
        }
        writer.key("metricsStamp")
        writer.stamp(metricsStamp)
        writer.key("pauses")
        writer.openArray()
        for pause in pauses {
            writer.element()
            pause.write(to: &writer)
        }
        writer.closeArray()
        writer.key("pausesStamp")
        writer.stamp(pausesStamp)
        writer.key("schemaVersion")
        writer.int(schemaVersion)
        writer.key("splitID")
        writer.id(splitID)
        writer.key("splitName")
        writer.string(splitName)
        writer.key("startedAt")
        writer.time(startedAt)
        writer.key("status")
        writer.string(status.rawValue)
        writer.key("updatedAt")
        writer.time(updatedAt)
        writer.closeObject()
        return writer.bytes
    }
}

extension ExerciseLog {
    fileprivate func write(to writer: inout DocumentJSONWriter) {
        writer.openObject()
        writer.key("equipment")
        writer.string(equipment)
        writer.key("exerciseName")
        writer.string(exerciseName)
        writer.key("id")
        writer.id(id)
        if let mark {
            writer.key("mark")
            writer.string(mark.rawValue)
        }
        writer.key("markStamp")
        writer.stamp(markStamp)
        writer.key("resolution")
        writer.string(resolution.rawValue)
        writer.key("sets")
        writer.openArray()
        for set in sets {
            writer.element()
            set.write(to: &writer)
        }
        writer.closeArray()
        writer.key("targetReps")
        writer.int(targetReps)
        writer.key("targetWeight")
        writer.double(targetWeight)
        writer.closeObject()
    }
}

extension SetRecord {
    fileprivate func write(to writer: inout DocumentJSONWriter) {
        writer.openObject()
        if let completedAt {
            writer.key("completedAt")
            writer.time(completedAt)
        }
        if let reps {
            writer.key("reps")
            writer.int(reps)
        }
        writer.key("stamp")
        writer.stamp(stamp)
        if let weight {
            writer.key("weight")
            writer.double(weight)
        }
        writer.closeObject()
    }
}

extension SessionMetrics {
    fileprivate func write(to writer: inout DocumentJSONWriter) {
        writer.openObject()
        writer.key("activeSeconds")
        writer.double(activeSeconds)
        writer.key("recordedAt")
        writer.time(recordedAt)
        writer.key("setsCompleted")
        writer.int(setsCompleted)
        writer.key("totalVolume")
        writer.double(totalVolume)
        writer.closeObject()
    }
}

extension Ending {
    fileprivate func write(to writer: inout DocumentJSONWriter) {
        writer.openObject()
        if let at {
            writer.key("at")
            writer.time(at)
        }
        writer.key("stamp")
        writer.stamp(stamp)
        writer.closeObject()
    }
}

extension PauseInterval {
    fileprivate func write(to writer: inout DocumentJSONWriter) {
        writer.openObject()
        if let end {
            writer.key("end")
            writer.time(end)
        }
        writer.key("start")
        writer.time(start)
        writer.closeObject()
    }
}

/// JSON text in `JSONEncoder`'s layout (swift-foundation's `JSONWriter`), compact or pretty. Pretty: a
/// newline after each opening bracket, members and elements indented two spaces a level with `,\n`
/// between them, `" : "` after a key, then a newline and the outer indent before the closing bracket
/// (so an empty array is `[\n\n` + indent + `]`); no newline at the end.
package struct DocumentJSONWriter {
    private(set) var bytes: [UInt8] = []
    private let pretty: Bool
    private var depth = 0
    /// Whether the innermost open container has no member or element yet.
    private var first = true

    init(pretty: Bool, capacity: Int) {
        self.pretty = pretty
        bytes.reserveCapacity(pretty ? capacity * 2 : capacity)
    }

    mutating func openObject() { open(UInt8(ascii: "{")) }
    mutating func closeObject() { close(UInt8(ascii: "}")) }
    mutating func openArray() { open(UInt8(ascii: "[")) }
    mutating func closeArray() { close(UInt8(ascii: "]")) }

    private mutating func open(_ bracket: UInt8) {
        bytes.append(bracket)
        if pretty { bytes.append(.newline) }
        depth += 1
        first = true
    }

    private mutating func close(_ bracket: UInt8) {
        depth -= 1
        if pretty {
            bytes.append(.newline)
            indent()
        }
        bytes.append(bracket)
        first = false
    }

    /// Starts the next element of an array.
    mutating func element() {
        if !first {
            bytes.append(UInt8(ascii: ","))
            if pretty { bytes.append(.newline) }
        }
        first = false
        if pretty { indent() }
    }

    /// Starts the next member of an object: its key (one that needs no escapes) and the colon.
    mutating func key(_ key: StaticString) {
        element()
        bytes.append(.quote)
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(.quote)
        if pretty { bytes.append(.space) }
        bytes.append(UInt8(ascii: ":"))
        if pretty { bytes.append(.space) }
    }

    /// A value already encoded (compact), as it is.
    mutating func raw(_ encoded: [UInt8]) { bytes += encoded }

    private mutating func indent() {
        bytes.append(contentsOf: repeatElement(.space, count: 2 * depth))
    }

    mutating func int(_ value: Int) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        let start = bytes.count
        var rest = value.magnitude
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        bytes[start...].reverse()
    }

    mutating func double(_ value: Double) {
        guard value.isFinite else { preconditionFailure("a document holds only finite numbers, not \(value)") }
        bytes += Self.number(value).utf8
    }

    /// A finite number as `JSONEncoder` writes it: `description` less a trailing `.0` (`100.0` is
    /// `100`, `-0.0` is `-0`, `1e-07` stays).
    package static func number(_ value: Double) -> String {
        let text = value.description
        return text.hasSuffix(".0") && text.utf8.count > 2 ? String(text.dropLast(2)) : text
    }

    /// A quoted string.
    mutating func string(_ value: String) {
        bytes.append(.quote)
        escaped(value)
        bytes.append(.quote)
    }

    /// A string's UTF-8 bytes with `"`, `\` and `/` escaped by a backslash, control characters as `\b`,
    /// `\f`, `\n`, `\r`, `\t` or `\u00xx` (lower-case hex), every other byte as it is.
    private mutating func escaped(_ value: String) {
        var text = value
        text.withUTF8 { utf8 in
            var mark = 0
            for (index, byte) in utf8.enumerated() {
                let escape: UInt8
                switch byte {
                case .quote, .backslash, .slash: escape = byte
                case 0x08: escape = UInt8(ascii: "b")
                case 0x0C: escape = UInt8(ascii: "f")
                case .newline: escape = UInt8(ascii: "n")
                case 0x0D: escape = UInt8(ascii: "r")
                case 0x09: escape = UInt8(ascii: "t")
                case 0x00..<0x20: escape = UInt8(ascii: "u")
                default: continue
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark..<index]))
                bytes.append(.backslash)
                bytes.append(escape)
                if escape == UInt8(ascii: "u") {
                    bytes.append(UInt8(ascii: "0"))
                    bytes.append(UInt8(ascii: "0"))
                    bytes.append(.hexDigit(byte >> 4, upperCase: false))
                    bytes.append(.hexDigit(byte & 0xF, upperCase: false))
                }
                mark = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark...]))
        }
    }

    /// A `Timestamp`: the string of its `description`.
    mutating func time(_ time: Timestamp) {
        bytes.append(.quote)
        timeText(time)
        bytes.append(.quote)
    }

    /// A `Stamp`: the string of its `description`, `<time>/<counter>/<origin>` (slashes escaped).
    mutating func stamp(_ stamp: Stamp) {
        bytes.append(.quote)
        timeText(stamp.time)
        bytes.append(.backslash)
        bytes.append(.slash)
        int(stamp.counter)
        bytes.append(.backslash)
        bytes.append(.slash)
        bytes.append(contentsOf: stamp.origin.rawValue.utf8)
        bytes.append(.quote)
    }

    /// A `DocumentID`: the string of its `description`, upper-case hex digits in 8-4-4-4-12 groups.
    mutating func id(_ id: DocumentID) {
        bytes.append(.quote)
        let (high, low) = id.halves
        for nibble in 0..<32 {
            if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 { bytes.append(UInt8(ascii: "-")) }
            let word = nibble < 16 ? high : low
            bytes.append(.hexDigit(UInt8(truncatingIfNeeded: word >> (60 - 4 * (nibble % 16))) & 0xF, upperCase: true))
        }
        bytes.append(.quote)
    }

    /// A timestamp's text, written in place (it needs no escapes) or, for a year outside 0–9999, its
    /// `description` escaped.
    private mutating func timeText(_ time: Timestamp) {
        let written = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Timestamp.iso8601Length) { buffer in
            guard let count = time.write(into: buffer) else { return false }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<count]))
            return true
        }
        if !written { escaped(time.description) }
    }
}

extension UInt8 {
    fileprivate static var quote: UInt8 { UInt8(ascii: "\"") }
    fileprivate static var backslash: UInt8 { UInt8(ascii: "\\") }
    fileprivate static var slash: UInt8 { UInt8(ascii: "/") }
    fileprivate static var space: UInt8 { UInt8(ascii: " ") }
    fileprivate static var newline: UInt8 { UInt8(ascii: "\n") }

    /// The hexadecimal digit of a value 0–15, in lower case or upper case.
    fileprivate static func hexDigit(_ value: UInt8, upperCase: Bool) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : (upperCase ? UInt8(ascii: "A") : UInt8(ascii: "a")) + value - 10
    }
}
