import FoundationEssentials

/// Why a document, tombstone, settings value or context payload could not be decoded.
package enum DocumentError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The `schemaVersion` field names a version this build does not understand.
    case unsupportedSchemaVersion(type: String, found: Int, supported: Int)
    /// A field is missing, has the wrong type or an invalid value; `field` is its dotted path.
    case malformed(type: String, field: String, reason: String)
    /// The bytes are not JSON at all.
    case notJSON(type: String, reason: String)

    package var description: String {
        switch self {
        case .unsupportedSchemaVersion(let type, let found, let supported):
            return "\(type): unsupported schemaVersion \(found) (this build reads version \(supported))"
        case .malformed(let type, let field, let reason):
            return "\(type): field '\(field)' is invalid: \(reason)"
        case .notJSON(let type, let reason):
            return "\(type): not a JSON document: \(reason)"
        }
    }
}

/// A value that lands on disk or crosses the wire as a JSON document with a `schemaVersion` field.
package protocol VersionedDocument: Codable, Equatable, Sendable {
    /// The schema version this build writes.
    static var currentSchemaVersion: Int { get }
    /// The oldest version this build reads (older ones are migrated on decode); defaults to the current one.
    static var oldestReadableSchemaVersion: Int { get }
    /// Checks what JSON types alone cannot (ranges, cross-field consistency); throws `malformed`.
    func validate() throws(DocumentError)
}

extension VersionedDocument {
    package static var oldestReadableSchemaVersion: Int { currentSchemaVersion }

    package func validate() throws(DocumentError) {}
}

/// The one JSON coder for documents: sorted keys, timestamps as `Timestamp`'s ISO-8601 form,
/// strict on what matters (schema version, IDs, timestamps, required fields) and silent on
/// unknown extra keys.
package enum DocumentCoder {
    /// Encodes a document for disk: pretty-printed with sorted keys, so files diff well.
    package static func encodeForDisk(_ value: some Encodable) -> [UInt8] {
        encode(value, pretty: true)
    }

    /// Encodes a value for the wire: compact, sorted keys.
    package static func encodeCompact(_ value: some Encodable) -> [UInt8] {
        encode(value, pretty: false)
    }

    /// Decodes `bytes` as `T`, checking the schema version before anything else.
    ///
    /// One parse: `Probed` reads `schemaVersion` from the document's keyed container, then decodes `T`
    /// from the same decoder (an unknown version is reported as such, never as whatever field the
    /// newer schema happened to change).
    package static func decode<T: VersionedDocument>(_ type: T.Type, from bytes: [UInt8]) throws(DocumentError) -> T {
        // Runs and workout updates as the daemons write them are read by hand (`JSONReader`), the rest
        // and anything out of the ordinary by `JSONDecoder`: the same value, or its exact error.
        if let reading = T.self as? any ReadByHand.Type,
            let value = bytes.withUnsafeBufferPointer({ reading.read($0) }) as? T
        {
            try value.validate()
            return value
        }
        let name = String(describing: T.self)
        let value: T
        do {
            value = try JSONDecoder().decode(Probed<T>.self, from: Data(bytes)).value
        } catch let refusal as SchemaRefusal {
            switch refusal {
            case .missing:
                throw .malformed(type: name, field: "schemaVersion", reason: "missing")
            case .unsupported(let found):
                throw .unsupportedSchemaVersion(type: name, found: found, supported: T.currentSchemaVersion)
            }
        } catch let error as DecodingError {
            throw describe(error, type: name)
        } catch {
            throw .notJSON(type: name, reason: "\(error)")
        }
        try value.validate()
        return value
    }

    /// Refuses a nested document (a context's run, a message's run) whose own `schemaVersion` this build
    /// does not read: the outer version says nothing about the documents inside it.
    package static func requireCurrentSchema<T: VersionedDocument>(
        _ found: Int, of type: T.Type
    ) throws(DocumentError) {
        guard found == T.currentSchemaVersion else {
            throw .unsupportedSchemaVersion(
                type: String(describing: T.self), found: found, supported: T.currentSchemaVersion)
        }
    }

    private static func encode(_ value: some Encodable, pretty: Bool) -> [UInt8] {
        // A run, the document written and sent most, is written by hand: the same bytes, ten times faster.
        if let run = value as? WorkoutDocument { return run.encodedJSON(pretty: pretty) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted] : [.sortedKeys]
        do {
            return Array(try encoder.encode(value))
        } catch {
            // Our document types hold only strings, integers, finite doubles and arrays of them;
            // validate() refuses non-finite doubles, so encoding cannot fail for a value we built.
            preconditionFailure("encoding \(type(of: value)) failed: \(error)")
        }
    }

    private static func describe(_ error: DecodingError, type: String) -> DocumentError {
        func path(_ codingPath: [any CodingKey]) -> String {
            var text = ""
            for key in codingPath {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return text.isEmpty ? "(document)" : text
        }
        switch error {
        case .keyNotFound(let key, let context):
            return .malformed(type: type, field: path(context.codingPath + [key]), reason: "missing")
        case .typeMismatch(let expected, let context):
            return .malformed(type: type, field: path(context.codingPath), reason: "expected \(expected)")
        case .valueNotFound(let expected, let context):
            return .malformed(type: type, field: path(context.codingPath), reason: "null where \(expected) is required")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return .notJSON(type: type, reason: context.debugDescription)
            }
            return .malformed(type: type, field: path(context.codingPath), reason: context.debugDescription)
        @unknown default:
            return .notJSON(type: type, reason: "\(error)")
        }
    }
}

/// A document read in one pass: its `schemaVersion` first (missing, or outside what `T` reads: the
/// decode stops there with a `SchemaRefusal`), then `T` from the same decoder.
private struct Probed<T: VersionedDocument>: Decodable {
    var value: T

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: SchemaKey.self)
        guard let found = try container.decodeIfPresent(Int.self, forKey: .schemaVersion) else {
            throw SchemaRefusal.missing
        }
        guard (T.oldestReadableSchemaVersion...T.currentSchemaVersion).contains(found) else {
            throw SchemaRefusal.unsupported(found)
        }
        value = try T(from: decoder)
    }

    private enum SchemaKey: String, CodingKey {
        case schemaVersion
    }
}

/// Why `Probed` stopped before decoding the document itself.
private enum SchemaRefusal: Error {
    case missing
    case unsupported(Int)
}
