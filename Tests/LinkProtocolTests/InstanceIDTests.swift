import LinkProtocol
import Testing

@Suite("InstanceID")
struct InstanceIDTests {
    @Test("keeps its 16 bytes in order and prints them as lowercase hex")
    func bytesAndHex() throws {
        let bytes: [UInt8] = [
            0x00, 0x01, 0x7F, 0x80, 0xFF, 0xAB, 0xCD, 0xEF, 0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE,
        ]
        let id = try #require(InstanceID(bytes: bytes))
        #expect(id.bytes == bytes)
        #expect(id.description == "00017f80ffabcdef1032547698badcfe")
        #expect(InstanceID(hex: "00017F80FFABCDEF1032547698BADCFE") == id)
        #expect(InstanceID(hex: id.description) == id)
    }

    @Test("refuses any byte count other than 16", arguments: [0, 1, 15, 17, 32])
    func wrongByteCount(count: Int) {
        #expect(InstanceID(bytes: [UInt8](repeating: 1, count: count)) == nil)
    }

    @Test(
        "refuses hex that is not 32 hex digits",
        arguments: [
            "", "0", "00017f80ffabcdef1032547698badcf", "00017f80ffabcdef1032547698badcfeg",
            "00017f80ffabcdef1032547698badcfe00", "zz017f80ffabcdef1032547698badcfe",
        ])
    func badHex(text: String) {
        #expect(InstanceID(hex: text) == nil)
    }
}
