/// Encodes every stored property under its own name, as the synthesized conformance does, except
/// that an absent optional is written as `null` rather than left out: docs/CLI.md documents each
/// status key, and a script reads `"pushError": null` where a missing key looks like an old daemon.
package protocol ExplicitNulls: Encodable {}

extension ExplicitNulls {
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: PropertyKey.self)
        for child in Mirror(reflecting: self).children {
            guard let label = child.label, let value = child.value as? any Encodable else { continue }
            let key = PropertyKey(stringValue: label)
            if Mirror(reflecting: child.value).displayStyle == .optional,
                Mirror(reflecting: child.value).children.isEmpty
            {
                try container.encodeNil(forKey: key)
            } else {
                try container.encode(value, forKey: key)
            }
        }
    }
}

private struct PropertyKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
