import FoundationEssentials

/// What is wrong with the shape of an admin request, in the request's own terms: the unknown verb or
/// field and what its place takes, the field of the wrong type and what it should hold, the missing
/// field and its verb. `AdminWire.decode` asks it when `JSONDecoder` refuses a request (whose own
/// words, "Invalid number of keys found, expected one", name neither), and about every request
/// `JSONDecoder` took, which ignores a field it does not know.
enum AdminRequestShape {
    /// Why `JSONDecoder` refused `bytes`, told from the request's JSON tree; nil when the bytes are not
    /// JSON at all (`JSONDecoder`'s own words say that best).
    static func problem(_ error: any Error, in bytes: [UInt8], verbs: [String: [String]]) -> String? {
        guard let tree = RequestJSON(bytes) else { return nil }
        guard case .object = tree else { return "a request is a JSON object holding one verb, got \(tree.kind)" }
        switch error {
        case DecodingError.typeMismatch(let type, let context):
            let path = RequestPath(context.codingPath)
            guard let found = tree.value(at: path) else { return nil }
            // An enum (a verb's place) finds an object whose keys are not exactly one of its cases.
            if case .object(let members) = found, !(type is [String: Any].Type) {
                return verbProblem(Array(members.keys), at: path, verbs: verbs[path.text])
            }
            guard let expected = expectation(type) else { return nil }
            return "field \"\(path.text)\": expected \(expected), got \(found.kind)"
        case DecodingError.valueNotFound(let type, let context):
            let path = RequestPath(context.codingPath)
            return "field \"\(path.text)\": expected \(expectation(type) ?? "a value"), got null"
        case DecodingError.keyNotFound(let key, let context):
            let path = RequestPath(context.codingPath)
            return path.isEmpty
                ? "missing field \"\(key.stringValue)\"" : "missing field \"\(key.stringValue)\" in \"\(path.text)\""
        case DecodingError.dataCorrupted(let context) where !context.codingPath.isEmpty:
            return "field \"\(RequestPath(context.codingPath).text)\": \(context.debugDescription)"
        default:
            return nil
        }
    }

    /// The first member of `bytes` that `command`, decoded from them, has no place for: a field its
    /// type does not know (`JSONDecoder` passes over one), or a second verb next to the one taken.
    static func unknownMember(
        of command: some Encodable, in bytes: [UInt8], verbs: [String: [String]]
    ) -> String? {
        guard let tree = RequestJSON(bytes) else { return nil }
        let fields = FieldRecorder.fields(of: command)
        return unknownMember(in: tree, at: RequestPath(), fields: fields, verbs: verbs)
    }

    private static func unknownMember(
        in value: RequestJSON, at path: RequestPath, fields: [RequestPath: Set<String>], verbs: [String: [String]]
    ) -> String? {
        switch value {
        case .object(let members):
            for key in members.keys.sorted() {
                if let known = fields[path], !known.contains(key) {
                    if let levelVerbs = verbs[path.text] ?? (path.isEmpty ? [] : nil) {
                        return "unknown verb \"\(key)\"\(path.inText)\(oneOf(levelVerbs))"
                    }
                    let expected =
                        known.isEmpty ? "expected no fields" : "expected: " + known.sorted().joined(separator: ", ")
                    return "unknown field \"\(key)\"\(path.inText) (\(expected))"
                }
                if let member = members[key],
                    let problem = unknownMember(in: member, at: path.appending(key), fields: fields, verbs: verbs)
                {
                    return problem
                }
            }
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                if let problem = unknownMember(
                    in: element, at: path.appending(index), fields: fields, verbs: verbs)
                {
                    return problem
                }
            }
        case .null, .bool, .number, .string:
            break
        }
        return nil
    }

    /// An enum's place holds `keys`, not exactly one of its cases (`levelVerbs`, when known).
    private static func verbProblem(_ keys: [String], at path: RequestPath, verbs levelVerbs: [String]?) -> String {
        let keys = keys.sorted()
        if let unknown = keys.first(where: { !(levelVerbs ?? []).contains($0) }), levelVerbs != nil || keys.count == 1 {
            return "unknown verb \"\(unknown)\"\(path.inText)\(oneOf(levelVerbs ?? []))"
        }
        if keys.isEmpty { return "no verb\(path.inText)\(oneOf(levelVerbs ?? []))" }
        let place = path.isEmpty ? "per request" : "in \"\(path.text)\""
        return "one verb \(place), got \(keys.count): " + keys.map { "\"\($0)\"" }.joined(separator: ", ")
    }

    private static func oneOf(_ verbs: [String]) -> String {
        verbs.isEmpty ? "" : " (expected one of: \(verbs.joined(separator: ", ")))"
    }

    /// What a value of `type` is written as, in JSON's words; nil for a type this does not know.
    private static func expectation(_ type: Any.Type) -> String? {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Double.Type, is Float.Type: "a number"
        case is any BinaryInteger.Type: "an integer"
        case is [Any].Type: "an array"
        case is [String: Any].Type: "an object"
        default: nil
        }
    }
}

/// Where a value lies in a request: its keys and array positions from the top, written
/// `createSplit.exercises[0].name`.
struct RequestPath: Hashable, Sendable {
    enum Step: Hashable, Sendable {
        case key(String)
        case index(Int)
    }

    private(set) var steps: [Step] = []

    init() {}

    /// The path a `DecodingError` or an encoder names: a key with an integer value is an array position.
    init(_ codingPath: [any CodingKey]) {
        steps = codingPath.map { key in key.intValue.map(Step.index) ?? .key(key.stringValue) }
    }

    var isEmpty: Bool { steps.isEmpty }

    func appending(_ key: String) -> RequestPath {
        var path = self
        path.steps.append(.key(key))
        return path
    }

    func appending(_ index: Int) -> RequestPath {
        var path = self
        path.steps.append(.index(index))
        return path
    }

    var text: String {
        var text = ""
        for step in steps {
            switch step {
            case .key(let key): text += text.isEmpty ? key : ".\(key)"
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    /// ` in "<path>"`, or nothing at the top.
    var inText: String { isEmpty ? "" : " in \"\(text)\"" }
}

/// A request's JSON as a tree, read only to say what is wrong with it.
enum RequestJSON: Decodable {
    case null
    case bool
    case number
    case string
    case array([RequestJSON])
    case object([String: RequestJSON])

    /// The tree `bytes` spell, or nil when they are not JSON.
    init?(_ bytes: [UInt8]) {
        guard let tree = try? JSONDecoder().decode(RequestJSON.self, from: Data(bytes)) else { return nil }
        self = tree
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if (try? container.decode(Bool.self)) != nil {
            self = .bool
        } else if (try? container.decode(Double.self)) != nil {
            self = .number
        } else if (try? container.decode(String.self)) != nil {
            self = .string
        } else if let elements = try? container.decode([RequestJSON].self) {
            self = .array(elements)
        } else {
            self = .object(try container.decode([String: RequestJSON].self))
        }
    }

    /// What the value is, in JSON's words: "a string", "an object".
    var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// The value at `path`, or nil when the tree has none there.
    func value(at path: RequestPath) -> RequestJSON? {
        var value = self
        for step in path.steps {
            switch (step, value) {
            case (.key(let key), .object(let members)):
                guard let member = members[key] else { return nil }
                value = member
            case (.index(let index), .array(let elements)):
                guard elements.indices.contains(index) else { return nil }
                value = elements[index]
            default:
                return nil
            }
        }
        return value
    }
}
