import PhoneStore
import Testing

@Suite("OwnWrites: what the watcher may pass over")
struct OwnWritesTests {
    @Test("an entry matches once, only the same bytes, and goes with any event on its path")
    func takenOnce() {
        let own = OwnWrites()
        own.note([1, 2, 3], at: "/d/a.json")
        own.note([4], at: "/d/b.json")
        #expect(!own.take("/d/a.json", matching: [1, 2]))
        #expect(!own.take("/d/a.json", matching: [1, 2, 3]), "the mismatch took the entry")
        #expect(own.take("/d/b.json", matching: [4]))
        #expect(!own.take("/d/b.json", matching: [4]))
        own.note([5], at: "/d/c.json")
        own.forget("/d/c.json")
        #expect(!own.take("/d/c.json", matching: [5]))
        #expect(own.count == 0)
    }

    @Test("a later write of the same path replaces the entry")
    func laterWriteReplaces() {
        let own = OwnWrites()
        own.note([1], at: "/d/a.json")
        own.note([2], at: "/d/a.json")
        #expect(!own.take("/d/a.json", matching: [1]))
        own.note([1], at: "/d/a.json")
        own.note([2], at: "/d/a.json")
        #expect(own.take("/d/a.json", matching: [2]))
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
        #expect(own.take("/d/big-2", matching: big))
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
