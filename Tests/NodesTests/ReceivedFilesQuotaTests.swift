import Nodes
import Testing

/// Which received files go when the app keeps a new one.
@Suite("The received files' quota")
struct ReceivedFilesQuotaTests {
    private func kept(_ name: String, _ bytes: Int, at time: Int64) -> ReceivedFilesQuota.Kept {
        ReceivedFilesQuota.Kept(name: name, bytes: bytes, arrivedNanoseconds: time)
    }

    @Test("under the quota nothing goes")
    func underQuota() {
        let quota = ReceivedFilesQuota(maximumBytes: 100)
        #expect(quota.removals([kept("a-1", 40, at: 1), kept("a-2", 60, at: 2)], newest: "a-2") == [])
    }

    @Test("over it, the oldest go first until the rest fit")
    func oldestFirst() {
        let quota = ReceivedFilesQuota(maximumBytes: 100)
        let files = [kept("a-3", 30, at: 3), kept("a-1", 40, at: 1), kept("a-2", 50, at: 2), kept("a-4", 40, at: 4)]
        #expect(quota.removals(files, newest: "a-4") == ["a-1", "a-2"])
    }

    @Test("the file just kept stays, even alone over the quota; arrival ties break by name")
    func newestStays() {
        let quota = ReceivedFilesQuota(maximumBytes: 10)
        let files = [kept("b-2", 5, at: 7), kept("big", 500, at: 1), kept("b-1", 5, at: 7)]
        #expect(quota.removals(files, newest: "big") == ["b-1", "b-2"])
        #expect(ReceivedFilesQuota(maximumBytes: 0).removals([kept("only", 1, at: 1)], newest: "only") == [])
    }
}
