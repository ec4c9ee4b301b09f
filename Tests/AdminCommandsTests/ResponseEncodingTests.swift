import AdminCommands
import Foundation
import Testing

/// `AdminResponse.encoded` is written by hand; it must be `JSONEncoder`'s bytes (sorted keys, slashes
/// unescaped) and a newline, whatever the strings hold.
@Suite("Admin response encoding: JSONEncoder's bytes, written by hand")
struct ResponseEncodingTests {
    static func expected(_ response: AdminResponse) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(response)) + [0x0A]
    }

    /// Text from every control character, quotes, backslashes, slashes, DEL, non-ASCII and emoji.
    static func text(_ random: inout SystemRandomNumberGenerator) -> String {
        let pieces: [String] =
            [
                "a", "ok", "\"", "\\", "/", "</", "\u{7F}", "é", "漢", "🏋️", "\u{2028}", " ", "{\"k\":[1,2]}",
            ] + (0..<32).map { String(UnicodeScalar(UInt8($0))) }
        return (0..<Int.random(in: 0...12, using: &random)).map { _ in pieces.randomElement(using: &random)! }
            .joined()
    }

    @Test("every status, every field present or absent, over 2,000 random responses")
    func matchesJSONEncoder() throws {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var response = AdminResponse(
                status: [.ok, .refused, .error].randomElement(using: &random)!,
                message: Bool.random(using: &random) ? Self.text(&random) : nil,
                text: Bool.random(using: &random) ? Self.text(&random) : nil,
                json: Bool.random(using: &random) ? Self.text(&random) : nil)
            response.more = [nil, true, false].randomElement(using: &random)!
            response.daemon = Bool.random(using: &random) ? Self.text(&random) : nil
            let expected = try Self.expected(response)
            #expect(response.encoded == expected, "\(String(decoding: expected, as: UTF8.self))")
            #expect(try JSONDecoder().decode(AdminResponse.self, from: Data(response.encoded.dropLast())) == response)
        }
    }
}
