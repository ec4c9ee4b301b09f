import AdminCommands
import ChildProcesses
import Foundation
import LinkRuntime

/// Files streamed both ways while the partitions happen (`file send` on either CLI), and what the
/// receivers kept of them at the end (see `FileChecker`).
struct FileTraffic: Sendable {
    let harness: Harness
    let stop: StopFlag
    let seed: UInt64
    /// Files per direction at most; nil for no limit.
    let limit: Int?

    /// Sends files one after another, a seeded 3–8 s apart, until stopped or at the limit: each
    /// with random content under a first line naming it, and metadata naming it too.
    func run(_ direction: FileDirection) async -> [SentFile] {
        var random = SeededGenerator(seed: seed, stream: direction == .phoneToWatch ? 5 : 6)
        let folder = "\(harness.work)/files/\(direction.rawValue)"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var sent: [SentFile] = []
        while sent.count < limit ?? .max, await pause(random.duration(3...8)) {
            let id = "\(direction.tag)-\(sent.count + 1)"
            let content = Self.content(id: id, size: Self.size(&random), random: &random)
            let path = "\(folder)/\(id)"
            var file = SentFile(
                id: id, direction: direction, bytes: content.count, sha256: Self.sha256(content), outcome: .refused)
            guard FileManager.default.createFile(atPath: path, contents: Data(content)) else {
                file.detail = "the tester could not write \(path)"
                sent.append(file)
                continue
            }
            let arguments = ["file", "send", path, "--metadata", FileChecker.metadata(id), "--json"]
            let result = await harness.ends(direction).sender.cli(arguments)
            file.outcome = EditOutcome(result)
            if file.outcome == .acknowledged {
                file.sequence =
                    (try? JSONDecoder().decode(
                        AdminReply.FileQueued.self, from: Data(result.standardOutput.utf8)))?.sequence
            } else {
                file.detail = result.transcript
            }
            sent.append(file)
        }
        return sent
    }

    /// Sleeps up to `length`, waking early when stopped; returns whether to go on.
    private func pause(_ length: Duration) async -> Bool {
        let clock = ContinuousClock()
        let end = clock.now + length
        while !stop.isSet, clock.now < end { try? await Task.sleep(for: .milliseconds(100)) }
        return !stop.isSet
    }

    /// 40% fit one chunk, 40% take a few, 20% many more than the 4-chunk window (up to 1 MiB).
    static func size(_ random: inout SeededGenerator) -> Int {
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<4: Int.random(in: 64...16_384, using: &random)
        case 4..<8: Int.random(in: 65_537...400_000, using: &random)
        default: Int.random(in: 400_001...1_048_576, using: &random)
        }
    }

    static func content(id: String, size: Int, random: inout SeededGenerator) -> [UInt8] {
        var bytes = Array(FileChecker.header(id).utf8)
        bytes.reserveCapacity(size)
        while bytes.count < size {
            withUnsafeBytes(of: random.next()) { bytes += $0.prefix(size - bytes.count) }
        }
        return bytes
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        var hash = SHA256()
        hash.update(bytes)
        return hash.finish().map { String(format: "%02x", $0) }.joined()
    }

    // MARK: The end

    /// Waits (up to `deadline`) until neither sender has a file outstanding, then checks each
    /// direction against what its receiver kept.
    static func check(_ sent: [SentFile], harness: Harness, deadline: Duration) async -> [FileFigures] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try? encoder.encode(sent).write(to: URL(fileURLWithPath: "\(harness.work)/files.json"))
        func outstanding(_ direction: FileDirection) async -> Int? {
            let result = await harness.ends(direction).sender.cli(["file", "list", "--json"])
            guard result.status == 0 else { return nil }
            return (try? JSONDecoder().decode([AdminReply.FileProgress].self, from: Data(result.standardOutput.utf8)))?
                .count
        }
        _ = await waitUntil(timeout: deadline, interval: .milliseconds(200)) {
            let (toWatch, toPhone) = (await outstanding(.phoneToWatch), await outstanding(.watchToPhone))
            return toWatch == 0 && toPhone == 0
        }
        var figures: [FileFigures] = []
        for direction in FileDirection.allCases {
            let observed = await observe(direction, harness: harness, outstanding: await outstanding(direction) ?? -1)
            figures.append(FileChecker.check(direction, sent: sent, observed: observed))
        }
        return figures
    }

    /// What the receiver of `direction` holds: its kept files, its log's deliveries, its listing, its inbox.
    private static func observe(_ direction: FileDirection, harness: Harness, outstanding: Int) async
        -> FileObservation
    {
        let (sender, receiver) = harness.ends(direction)
        let state = receiver.state
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "\(state)/received-files")) ?? []
        let stored = names.filter { !$0.hasPrefix(".") }.sorted().compactMap { name -> StoredFile? in
            guard let data = FileManager.default.contents(atPath: "\(state)/received-files/\(name)") else { return nil }
            let bytes = Array(data)
            return StoredFile(name: name, bytes: bytes.count, sha256: sha256(bytes), id: FileChecker.id(in: bytes))
        }
        var deliveries: [String] = []
        var dropped: [String] = []
        var removed: [String] = []
        for line in ChildProcess.readText(receiver.log).split(separator: "\n")
        where line.contains("msg=\"file received\"") || line.contains("msg=\"received file removed\"") {
            if line.contains("msg=\"received file removed\"") {
                if let name = Checker.field("name", in: line) { removed.append(name) }
                continue
            }
            guard let transfer = Checker.field("transfer", in: line) else { continue }
            deliveries.append(transfer)
            if Checker.field("storedAs", in: line) == "-" { dropped.append(transfer) }
        }
        let result = await receiver.cli(["file", "received", "--json"])
        let listing =
            result.status == 0
            ? try? JSONDecoder().decode([AdminReply.FileReceived].self, from: Data(result.standardOutput.utf8)) : nil
        let inbox = (try? FileManager.default.contentsOfDirectory(atPath: "\(state)/inbox")) ?? []
        return FileObservation(
            stored: stored, deliveries: deliveries, dropped: dropped, listing: listing,
            inbox: inbox.filter { !$0.hasPrefix(".") }, removed: removed, outstanding: outstanding,
            acrossDrops: acrossDrops(senderLog: ChildProcess.readText(sender.log), unlinked: sender.unlinkedText))
    }

    /// How many files the sender's log shows queued and not yet finished when its link dropped.
    static func acrossDrops(senderLog: String, unlinked: String) -> Int {
        var queued: [String: String] = [:]
        var spans: [(String, String)] = []
        var drops: [String] = []
        for line in senderLog.split(separator: "\n") where line.contains("component=file") || line.contains(unlinked) {
            guard let time = Checker.field("ts", in: line) else { continue }
            let sequence = Checker.field("sequence", in: line) ?? ""
            if line.contains("msg=\"file queued\"") {
                queued[sequence] = time
            } else if line.contains("msg=\"file transfer finished\""), let start = queued.removeValue(forKey: sequence)
            {
                spans.append((start, time))
            } else if line.contains("msg=\"\(unlinked)\"") {
                drops.append(time)
            }
        }
        return spans.filter { span in drops.contains { span.0 < $0 && $0 < span.1 } }.count
    }
}

/// One daemon as a file sender or receiver: its CLI, state directory and log.
struct FileEnd: Sendable {
    var cli: @Sendable ([String]) async -> CommandResult
    var state: String
    var log: String
    /// What its log says when it sees the link drop.
    var unlinkedText: String
}

extension Harness {
    /// The sending and the receiving end of `direction`.
    func ends(_ direction: FileDirection) -> (sender: FileEnd, receiver: FileEnd) {
        let phone = FileEnd(
            cli: { await phonectl($0) }, state: phoneStateDirectory, log: phoneLog, unlinkedText: "watch unlinked")
        let watch = FileEnd(
            cli: { await watchctl($0) }, state: watchStateDirectory, log: watchLog, unlinkedText: "phone unlinked")
        return direction == .phoneToWatch ? (phone, watch) : (watch, phone)
    }
}
