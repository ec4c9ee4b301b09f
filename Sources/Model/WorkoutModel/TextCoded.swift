/// A value stored in JSON as one string, its own text form (`description`).
package protocol TextCoded: Codable, CustomStringConvertible {
    /// Parses the text form; nil when `text` is not one.
    init?(codedText text: String)
    /// What the text form looks like, for the error naming a string that is not one.
    static var textFormName: String { get }
}

extension TextCoded {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let value = Self(codedText: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "not \(Self.textFormName): \(text.debugDescription)")
        }
        self = value
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
