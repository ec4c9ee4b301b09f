import AdminCommands
import Testing

@testable import chaostest

/// The partition tester's file check: exactly once, intact, nothing unknown.
@Suite("chaostest file check")
struct FileCheckerTests {
    private static func sent(_ number: Int, _ outcome: EditOutcome = .acknowledged) -> SentFile {
        let id = "w2p-\(number)"
        var random = SeededGenerator(seed: UInt64(number), stream: 0)
        let content = FileTraffic.content(id: id, size: 1000 * number, random: &random)
        return SentFile(
            id: id, direction: .watchToPhone, bytes: content.count, sha256: FileTraffic.sha256(content),
            sequence: UInt64(number), outcome: outcome)
    }

    private static func stored(_ file: SentFile, sequence: UInt64? = nil, sha256: String? = nil) -> StoredFile {
        StoredFile(
            name: "Q-\(sequence ?? file.sequence ?? 0)", bytes: file.bytes, sha256: sha256 ?? file.sha256, id: file.id)
    }

    private static func listed(_ file: SentFile, as id: String? = nil) -> AdminReply.FileReceived {
        AdminReply.FileReceived(
            transfer: "Q/\(file.sequence ?? 0)", bytes: UInt64(file.bytes),
            metadata: FileChecker.metadata(id ?? file.id),
            storedAs: "received-files/Q-\(file.sequence ?? 0)", receivedAt: "")
    }

    private static func observation(
        _ stored: [StoredFile], deliveries: [String]? = nil, listing: [AdminReply.FileReceived] = [],
        inbox: [String] = []
    ) -> FileObservation {
        FileObservation(
            stored: stored, deliveries: deliveries ?? stored.map { "Q/\($0.name.dropFirst(2))" }, dropped: [],
            listing: listing, inbox: inbox, outstanding: 0)
    }

    @Test("every acknowledged file once and intact passes, and the listing agrees")
    func clean() {
        let files = (1...3).map { Self.sent($0) }
        let figures = FileChecker.check(
            .watchToPhone, sent: files,
            observed: Self.observation(files.map { Self.stored($0) }, listing: files.map { Self.listed($0) }))
        #expect(figures.passed, "\(figures.problems)")
        #expect(figures.acknowledged == 3 && figures.delivered == 3 && figures.listed == 3)
        // The other direction sent nothing and received nothing.
        #expect(FileChecker.check(.phoneToWatch, sent: files, observed: Self.observation([])).attempted == 0)
    }

    @Test("a missing file is lost, a second copy or a second hand-over a duplicate, a changed one corrupt")
    func violations() {
        let files = (1...4).map { Self.sent($0) }
        let stored = [
            Self.stored(files[0]), Self.stored(files[0], sequence: 9),  // two copies of one file
            Self.stored(files[1], sha256: String(repeating: "0", count: 64)),  // bytes changed
            Self.stored(files[2], sequence: 7),  // stored under another file's sequence
        ]
        let deliveries = ["Q/1", "Q/9", "Q/2", "Q/7", "Q/7"]
        let figures = FileChecker.check(
            .watchToPhone, sent: files, observed: Self.observation(stored, deliveries: deliveries))
        #expect(figures.lost == 1)  // files[3]
        #expect(figures.duplicates == 2)  // files[0] twice, transfer Q/7 handed over twice
        #expect(figures.corrupt == 3)  // files[0]'s copy at 9 and files[2] are misfiled, files[1] changed
        #expect(figures.delivered == 2 && !figures.passed)  // files[0] and files[2]: their bytes are intact
        // The run fails (exit 1) on it, like on a lost edit.
        var report = Report(test: "partition", mode: "quick", seed: 1, workDirectory: "")
        report.converged = true
        #expect(report.passed)
        report.files = [figures]
        #expect(!report.passed && report.summary.contains("files 4 acknowledged, 2 delivered, 1 lost, 2 duplicates"))
    }

    @Test("a file nobody sent, or whose send was refused, is unknown; an indeterminate send may arrive or not")
    func unknown() {
        let refused = Self.sent(1, .refused)
        let maybe = Self.sent(2, .indeterminate)
        let maybeNot = Self.sent(3, .indeterminate)
        let stranger = StoredFile(name: "Q-5", bytes: 10, sha256: "x", id: nil)
        let figures = FileChecker.check(
            .watchToPhone, sent: [refused, maybe, maybeNot],
            observed: Self.observation([Self.stored(refused), Self.stored(maybe), stranger]))
        #expect(figures.unknown == 2 && figures.lost == 0 && figures.corrupt == 0 && figures.duplicates == 0)
    }

    @Test("`file received` naming another file, and a file left in the inbox, fail the check")
    func listingAndInbox() {
        let files = (1...2).map { Self.sent($0) }
        let figures = FileChecker.check(
            .watchToPhone, sent: files,
            observed: Self.observation(
                files.map { Self.stored($0) }, listing: [Self.listed(files[0], as: files[1].id)], inbox: ["Q-3"]))
        #expect(figures.corrupt == 1 && figures.leftInInbox == 1 && !figures.passed)
    }

    @Test("a file is in flight across a drop when its sender's link dropped between its queueing and its end")
    func acrossDrops() {
        let log = [
            #"ts=2026-01-01T00:00:01.000Z level=info component=file msg="file queued" sequence=1 bytes=10"#,
            #"ts=2026-01-01T00:00:02.000Z level=info component=link msg="watch unlinked" reason=silence"#,
            #"ts=2026-01-01T00:00:03.000Z level=info component=file msg="file transfer finished" sequence=1 outcome=delivered"#,
            #"ts=2026-01-01T00:00:04.000Z level=info component=file msg="file queued" sequence=2 bytes=10"#,
            #"ts=2026-01-01T00:00:05.000Z level=info component=file msg="file transfer finished" sequence=2 outcome=delivered"#,
        ].joined(separator: "\n")
        #expect(FileTraffic.acrossDrops(senderLog: log, unlinked: "watch unlinked") == 1)
        #expect(FileTraffic.acrossDrops(senderLog: log, unlinked: "phone unlinked") == 0)
    }

    @Test("the id is read back from the content's first line")
    func header() {
        var random = SeededGenerator(seed: 3, stream: 0)
        let content = FileTraffic.content(id: "p2w-7", size: 5000, random: &random)
        #expect(content.count == 5000 && FileChecker.id(in: content) == "p2w-7")
        #expect(FileChecker.id(in: Array("no header".utf8)) == nil)
    }
}
