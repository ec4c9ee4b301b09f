import PhoneStore
import Testing

@Suite("OwnWrites: what the watcher may pass over")
struct OwnWritesTests {
    @Test("an entry matches its bytes as often as asked; anything else at the path drops it")
    func matchesUntilSomethingElse() {
        let own = OwnWrites()
        own.note([1, 2, 3], at: "/d/a.json")
        own.note([4], at: "/d/b.json")
        // A second event for one write (a forked child's late close) matches too.
        #expect(own.matches("/d/b.json", [4]))
        #expect(own.matches("/d/b.json", [4]))
        #expect(!own.matches("/d/a.json", [1, 2]))
        #expect(!own.matches("/d/a.json", [1, 2, 3]), "the other bytes dropped the entry")
        own.forget("/d/b.json")
        #expect(!own.matches("/d/b.json", [4]))
        #expect(own.count == 0)
    }

    @Test("a later write of the same path replaces the entry")
    func laterWriteReplaces() {
        let own = OwnWrites()
        own.note([1], at: "/d/a.json")
        own.note([2], at: "/d/a.json")
        #expect(own.matches("/d/a.json", [2]))
        #expect(!own.matches("/d/a.json", [1]))
        #expect(!own.matches("/d/a.json", [2]))
    }

    @Test("past its entry or byte budget (events not coming) it forgets everything")
    func bounded() {
        let own = OwnWrites()
        for index in 0..<OwnWrites.capacity { own.note([1], at: "/d/\(index)") }
        #expect(own.count == OwnWrites.capacity)
        own.note([1], at: "/d/one-more")
        #expect(own.count == 1)
        let big = [UInt8](repeating: 7, count: OwnWrites.capacityBytes / 2 + 1)
        own.note(big, at: "/d/big-1")
        #expect(own.count == 2)
        own.note(big, at: "/d/big-2")
        #expect(own.count == 1)
        #expect(own.matches("/d/big-2", big))
    }

    @Test("what it holds is its byte budget at most, though the bytes noted came with spare capacity")
    func holdsNoSpareCapacity() {
        let own = OwnWrites()
        // A document's encoding reserves about three times what it writes (found holding 13 MB
        // under a 4 MiB budget in the endurance run).
        for index in 0..<8 {
            var bytes = [UInt8]()
            bytes.reserveCapacity(OwnWrites.capacityBytes / 8 * 3)
            bytes.append(contentsOf: repeatElement(UInt8(index), count: OwnWrites.capacityBytes / 8 - 64))
            own.note(bytes, at: "/d/\(index)")
        }
        #expect(own.count == 8)
        #expect(own.heldBytes <= OwnWrites.capacityBytes, "holds \(own.heldBytes) bytes")
        #expect(own.matches("/d/3", [UInt8](repeating: 3, count: OwnWrites.capacityBytes / 8 - 64)))
    }

    @Test("the directory notes its documents' writes, not a run's samples (the watcher never reads those)")
    func directoryNotesDocumentsOnly() throws {
        let fixture = try Fixture()
        try fixture.documents.writeSamples([1, 2, 3], id: id(2), startedAt: t0)
        #expect(fixture.documents.ownWrites.count == 0)
        try fixture.documents.write(run(2))
        try fixture.documents.write(split(1))
        #expect(fixture.documents.ownWrites.count == 2)
    }
}
