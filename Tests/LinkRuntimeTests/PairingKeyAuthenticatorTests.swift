import LinkProtocol
import LinkRuntime
import Testing

/// Parses hex digits (whitespace ignored) into bytes; test vectors are written in hex.
func hexBytes(_ text: String) -> [UInt8] {
    let digits = text.filter { !$0.isWhitespace }.map { UInt8(String($0), radix: 16)! }
    return stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
}

@Suite("PairingKeyAuthenticator")
struct PairingKeyAuthenticatorTests {
    /// One RFC 4231 HMAC-SHA-256 test case.
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let key: [UInt8]
        let data: [UInt8]
        let mac: [UInt8]
        var testDescription: String { name }
    }

    static let rfc4231: [Vector] = [
        Vector(
            name: "RFC 4231 test case 1",
            key: [UInt8](repeating: 0x0B, count: 20),
            data: Array("Hi There".utf8),
            mac: hexBytes("b0344c61d8db38535ca8afceaf0bf12b 881dc200c9833da726e9376c2e32cff7")
        ),
        Vector(
            name: "RFC 4231 test case 2",
            key: Array("Jefe".utf8),
            data: Array("what do ya want for nothing?".utf8),
            mac: hexBytes("5bdcc146bf60754e6a042426089575c7 5a003f089d2739839dec58b964ec3843")
        ),
        Vector(
            name: "RFC 4231 test case 3",
            key: [UInt8](repeating: 0xAA, count: 20),
            data: [UInt8](repeating: 0xDD, count: 50),
            mac: hexBytes("773ea91e36800e46854db8ebd09181a7 2959098b3ef8c122d9635514ced565fe")
        ),
        Vector(
            name: "RFC 4231 test case 6",
            key: [UInt8](repeating: 0xAA, count: 131),
            data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            mac: hexBytes("60e431591ee0b67f0d8a26aacbf5b77f 8e0bc6213728c5140546040f0ee37f54")
        ),
        Vector(
            name: "RFC 4231 test case 7",
            key: [UInt8](repeating: 0xAA, count: 131),
            data: Array(
                ("This is a test using a larger than block-size key and a larger than block-size data."
                    + " The key needs to be hashed before being used by the HMAC algorithm.").utf8
            ),
            mac: hexBytes("9b09ffa71b942fcb27635fbcd5b0e944 bfdc63644f0713938a7f51535c3a35e2")
        ),
    ]

    @Test("proofs are HMAC-SHA256: RFC 4231 vectors", arguments: rfc4231)
    func rfc4231Vectors(vector: Vector) throws {
        let authenticator = try PairingKeyAuthenticator(key: vector.key)
        #expect(authenticator.proof(for: vector.data) == vector.mac)
        #expect(authenticator.isValid(vector.mac, for: vector.data))
    }

    @Test(
        "frame seals are HMAC-SHA256 of the parts joined: RFC 4231 vectors, any cut, again and again",
        arguments: rfc4231)
    func parts(_ vector: Vector) throws {
        let authenticator = try PairingKeyAuthenticator(key: vector.key)
        for cut in 0...vector.data.count {
            // The keyed context is re-initialised for each MAC: the key must survive every reuse.
            for _ in 0..<3 {
                let parts = [vector.data[..<cut], [][...], vector.data[cut...]]
                #expect(authenticator.proof(forParts: parts) == vector.mac, "cut at \(cut)")
                #expect(authenticator.isValid(vector.mac[...], forParts: parts))
            }
        }
        var wrong = vector.mac
        wrong[0] ^= 1
        #expect(!authenticator.isValid(wrong[...], forParts: [vector.data[...]]))
        #expect(!authenticator.isValid(vector.mac.dropLast()[...], forParts: [vector.data[...]]))
    }

    @Test("a proof with any single bit flipped does not verify")
    func flippedBits() throws {
        let vector = Self.rfc4231[0]
        let authenticator = try PairingKeyAuthenticator(key: vector.key)
        for index in vector.mac.indices {
            for bit in 0..<8 {
                var tampered = vector.mac
                tampered[index] ^= 1 << UInt8(bit)
                #expect(!authenticator.isValid(tampered, for: vector.data), "byte \(index) bit \(bit)")
            }
        }
    }

    @Test("a proof of the wrong length does not verify, including a prefix of the right one")
    func wrongLength() throws {
        let vector = Self.rfc4231[1]
        let authenticator = try PairingKeyAuthenticator(key: vector.key)
        #expect(!authenticator.isValid([], for: vector.data))
        #expect(!authenticator.isValid(Array(vector.mac.prefix(16)), for: vector.data))
        #expect(!authenticator.isValid(vector.mac + [0], for: vector.data))
    }

    @Test("a different key or transcript gives a different proof")
    func keyAndTranscriptMatter() throws {
        let one = try PairingKeyAuthenticator(key: Array("key one".utf8))
        let two = try PairingKeyAuthenticator(key: Array("key two".utf8))
        let transcript = Array("transcript".utf8)
        #expect(one.proof(for: transcript) != two.proof(for: transcript))
        #expect(!two.isValid(one.proof(for: transcript), for: transcript))
        #expect(one.proof(for: transcript) != one.proof(for: transcript + [0]))
        #expect(one.proof(for: []).count == 32)
    }

    @Test("an empty key is refused with a clear error")
    func emptyKey() {
        #expect(throws: PairingKeyError.empty) { try PairingKeyAuthenticator(key: []) }
        #expect(PairingKeyError.empty.description.contains("pairing key is empty"))
    }

    @Test("describing the authenticator never reveals the key")
    func descriptionHidesKey() throws {
        let authenticator = try PairingKeyAuthenticator(key: Array("s3cret-pairing-key".utf8))
        #expect(String(describing: authenticator) == "PairingKeyAuthenticator(key: 18 bytes)")
        #expect(String(reflecting: authenticator) == "PairingKeyAuthenticator(key: 18 bytes)")
    }
}
