/// An optional field of an admin reply that is written as `null` when absent, where a plain optional
/// would be left out: a status shows every key. Decoding takes a missing key as nil, like a plain
/// optional. (A wrapper, not reflection: encoding a status by `Mirror` was 40 % of watchd's work
/// serving one.)
@propertyWrapper
package struct ExplicitNull<Value: Codable>: Codable {
    package var wrappedValue: Value?

    package init(wrappedValue: Value?) {
        self.wrappedValue = wrappedValue
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension ExplicitNull: Sendable where Value: Sendable {}
extension ExplicitNull: Equatable where Value: Equatable {}

extension KeyedDecodingContainer {
    /// A missing key decodes as nil, as for a plain optional (synthesized `Decodable` calls this).
    package func decode<Value>(_: ExplicitNull<Value>.Type, forKey key: Key) throws -> ExplicitNull<Value> {
        ExplicitNull(wrappedValue: try decodeIfPresent(Value.self, forKey: key))
    }
}
