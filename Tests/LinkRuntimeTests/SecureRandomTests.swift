import LinkRuntime
import Testing

@Suite("SecureRandom")
struct SecureRandomTests {
    @Test("returns exactly the requested number of bytes", arguments: [0, 1, 16, 32, 4096])
    func count(count: Int) throws {
        #expect(try SecureRandom.bytes(count: count).count == count)
    }

    @Test("two draws differ (a 2^-256 chance of a false failure)")
    func drawsDiffer() throws {
        #expect(try SecureRandom.bytes(count: 32) != SecureRandom.bytes(count: 32))
    }

    @Test("a negative count is refused with a clear error")
    func negativeCount() {
        #expect(throws: SecureRandomError.invalidCount(-1)) { try SecureRandom.bytes(count: -1) }
    }
}
