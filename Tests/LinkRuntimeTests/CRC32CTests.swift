import LinkProtocol
import LinkRuntime
import Testing

@Suite("CRC32C")
struct CRC32CTests {
    @Test("matches the published check value and the RFC 3720 B.4 vectors")
    func vectors() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(CRC32C.checksum((0..<32).reversed().map { UInt8($0) }) == 0x113F_DB5C)
    }

    @Test("extending a checksum equals checksumming the concatenation, at every split point")
    func incremental() {
        let bytes = Array("The quick brown fox jumps over the lazy dog".utf8)
        for split in 0...bytes.count {
            #expect(CRC32C.update(CRC32C.checksum(bytes[..<split]), with: bytes[split...]) == CRC32C.checksum(bytes))
        }
    }

    @Test("the empty input checksums to zero")
    func empty() {
        #expect(CRC32C.checksum([UInt8]()) == 0)
    }
}
