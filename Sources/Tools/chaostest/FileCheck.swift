import AdminCommands
import Foundation

/// Which way a file goes.
enum FileDirection: String, Codable, Sendable, CaseIterable {
    case phoneToWatch
    case watchToPhone

    var label: String { self == .phoneToWatch ? "phone→watch" : "watch→phone" }
    /// The prefix of its files' ids.
    var tag: String { self == .phoneToWatch ? "p2w" : "w2p" }
}

/// One `file send` attempt.
struct SentFile: Codable, Sendable {
    var id: String
    var direction: FileDirection
    var bytes: Int
    /// SHA-256 of the content, hex.
    var sha256: String
    /// The sequence the CLI answered, when acknowledged.
    var sequence: UInt64?
    var outcome: EditOutcome
    var detail = ""
}

/// A file found in the receiver's `received-files/`, as read at the end.
struct StoredFile: Sendable {
    /// `<queue>-<sequence>`.
    var name: String
    var bytes: Int
    var sha256: String
    /// The id in the content's first line, nil when there is none.
    var id: String?
}

/// What the receiving side of one direction ended with.
struct FileObservation: Sendable {
    var stored: [StoredFile]
    /// The `transfer` of every `file received` line in the receiver's log, in order.
    var deliveries: [String]
    /// Transfers the receiver's log says it dropped (`storedAs=-`).
    var dropped: [String]
    /// `file received --json` (its newest 32), nil when the read failed.
    var listing: [AdminReply.FileReceived]?
    /// What is left in the receiver's `inbox/`.
    var inbox: [String]
    /// Files the receiver's log says it removed from `received-files/` to keep its quota (`<queue>-<sequence>`).
    var removed: [String] = []
    /// Files still in the sender's `file list` when the checks ran.
    var outstanding: Int
    /// Files queued but not yet finished when the sender's link dropped.
    var acrossDrops = 0
}

/// One direction's file figures; every count but the informational ones must be zero to pass.
struct FileFigures: Codable, Sendable {
    var direction: FileDirection
    var attempted = 0
    var acknowledged = 0
    var acknowledgedBytes = 0
    /// Acknowledged files with an intact copy in `received-files/`.
    var delivered = 0
    /// Acknowledged files with no copy at all.
    var lost = 0
    /// Extra copies of one file, or one transfer handed to the app more than once.
    var duplicates = 0
    /// Copies whose size or digest differ from what was sent, stored under another file's sequence,
    /// or listed by `file received` with another file's metadata or size.
    var corrupt = 0
    /// Files that no attempted send could have produced.
    var unknown = 0
    var leftInInbox = 0
    /// Sends the CLI refused for their command line: the tester's own mistakes.
    var malformed = 0
    /// Informational: still outstanding at the sender when checked, in flight when a link dropped,
    /// and `file received` entries cross-checked.
    var outstanding = 0
    var acrossDrops = 0
    var listed = 0
    /// Informational: delivered (handed to the app), then removed by the receiver's quota.
    var removedByQuota = 0
    var problems: [String] = []

    var passed: Bool {
        lost == 0 && duplicates == 0 && corrupt == 0 && unknown == 0 && leftInInbox == 0 && malformed == 0
    }

    var line: String {
        "files \(direction.label): \(attempted) attempted, \(acknowledged) acknowledged "
            + "(\(String(format: "%.1f", Double(acknowledgedBytes) / 1_048_576)) MiB), \(delivered) delivered, "
            + "\(lost) lost, \(duplicates) duplicates, \(corrupt) corrupt, \(unknown) unknown, "
            + "\(leftInInbox) left in the inbox; \(acrossDrops) in flight across a link drop, "
            + "\(listed) cross-checked with `file received`, \(removedByQuota) removed by the receiver's quota"
            + (malformed > 0 ? "; \(malformed) malformed (the tester's mistake: fails the run)" : "")
    }

    mutating func problem(_ text: String) {
        if problems.count < 20 { problems.append("\(direction.label): \(text)") }
    }
}

/// The files' exactly-once check: every acknowledged file arrived once and intact, nothing else did.
enum FileChecker {
    /// The first line of every file the tester sends.
    static func header(_ id: String) -> String { "chaostest file \(id)\n" }

    /// The id in a content's first line.
    static func id(in content: [UInt8]) -> String? {
        let prefix = Array("chaostest file ".utf8)
        guard content.starts(with: prefix), let end = content.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        return String(decoding: content[prefix.count..<end], as: UTF8.self)
    }

    /// The metadata every sent file carries.
    static func metadata(_ id: String) -> String { #"{"chaosFile":"\#(id)"}"# }

    static func check(_ direction: FileDirection, sent: [SentFile], observed: FileObservation) -> FileFigures {
        var figures = FileFigures(
            direction: direction, outstanding: observed.outstanding, acrossDrops: observed.acrossDrops)
        let attempts = sent.filter { $0.direction == direction }
        figures.attempted = attempts.count
        figures.malformed = attempts.filter { $0.outcome == .malformed }.count
        if figures.malformed > 0 { figures.problem("malformed: \(figures.malformed) sends the CLI refused to make") }
        let acknowledged = attempts.filter { $0.outcome == .acknowledged }
        figures.acknowledged = acknowledged.count
        figures.acknowledgedBytes = acknowledged.reduce(0) { $0 + $1.bytes }
        // A send whose CLI died mid-request may have been queued: its file may arrive, but need not.
        let possible = Dictionary(
            attempts.filter { $0.outcome == .acknowledged || $0.outcome == .indeterminate }.map { ($0.id, $0) }
        ) { first, _ in first }

        var copies: [String: [StoredFile]] = [:]
        for file in observed.stored {
            guard let id = file.id, let expected = possible[id] else {
                figures.unknown += 1
                figures.problem("unknown: received-files/\(file.name) (\(file.bytes) bytes, id \(file.id ?? "none"))")
                continue
            }
            copies[id, default: []].append(file)
            if file.bytes != expected.bytes || file.sha256 != expected.sha256 {
                figures.corrupt += 1
                figures.problem(
                    "corrupt: \(id) is \(file.bytes) bytes, SHA-256 \(file.sha256.prefix(16))…; sent \(expected.bytes) bytes, "
                        + "\(expected.sha256.prefix(16))…")
            } else if let sequence = expected.sequence, !file.name.hasSuffix("-\(sequence)") {
                figures.corrupt += 1
                figures.problem("corrupt: \(id), sent as file \(sequence), is stored as received-files/\(file.name)")
            }
        }
        for (id, found) in copies.sorted(by: { $0.key < $1.key }) where found.count > 1 {
            figures.duplicates += found.count - 1
            figures.problem(
                "duplicate: \(id) arrived \(found.count) times (\(found.map(\.name).joined(separator: ", ")))")
        }
        for file in acknowledged {
            let found = copies[file.id] ?? []
            if found.isEmpty, wasRemovedByQuota(file, observed) {
                // Handed to the app, kept, then removed for a newer one: delivered (its log says which).
                figures.delivered += 1
                figures.removedByQuota += 1
            } else if found.isEmpty {
                figures.lost += 1
                figures.problem("lost: \(file.id) (file \(file.sequence.map(String.init) ?? "?"), \(file.bytes) bytes)")
            } else if found.contains(where: { $0.bytes == file.bytes && $0.sha256 == file.sha256 }) {
                figures.delivered += 1
            }
        }
        var handed: [String: Int] = [:]
        for transfer in observed.deliveries { handed[transfer, default: 0] += 1 }
        for (transfer, count) in handed.sorted(by: { $0.key < $1.key }) where count > 1 {
            figures.duplicates += count - 1
            figures.problem("duplicate: transfer \(transfer) was handed to the app \(count) times")
        }
        for transfer in observed.dropped { figures.problem("transfer \(transfer) was dropped by the receiver") }
        crossCheck(observed, possible: possible, into: &figures)
        figures.leftInInbox = observed.inbox.count
        if !observed.inbox.isEmpty {
            figures.problem("left in the inbox: \(observed.inbox.sorted().joined(separator: ", "))")
        }
        return figures
    }

    /// Whether the receiver handed `file` to its app (a `file received` line) and later removed it
    /// from `received-files/` to keep its quota (a `received file removed` line).
    private static func wasRemovedByQuota(_ file: SentFile, _ observed: FileObservation) -> Bool {
        guard let sequence = file.sequence else { return false }
        return observed.removed.contains { name in
            guard name.hasSuffix("-\(sequence)"), let dash = name.lastIndex(of: "-") else { return false }
            return observed.deliveries.contains("\(name[..<dash])/\(sequence)")
        }
    }

    /// `file received --json`: each entry's metadata must name the file stored where it says, at its size.
    private static func crossCheck(
        _ observed: FileObservation, possible: [String: SentFile], into figures: inout FileFigures
    ) {
        guard let listing = observed.listing else {
            figures.problem("`file received --json` could not be read")
            return
        }
        let stored = Dictionary(observed.stored.map { ("received-files/\($0.name)", $0) }) { first, _ in first }
        for entry in listing {
            figures.listed += 1
            if let storedAs = entry.storedAs, observed.removed.contains(where: { "received-files/\($0)" == storedAs }) {
                continue
            }
            let metadata = try? JSONSerialization.jsonObject(with: Data(entry.metadata.utf8)) as? [String: Any]
            let named = metadata?["chaosFile"] as? String
            let holds = entry.storedAs.flatMap { stored[$0]?.id }
            if let named, holds == named, let expected = possible[named], entry.bytes == UInt64(expected.bytes) {
                continue
            }
            figures.corrupt += 1
            figures.problem(
                "corrupt: `file received` lists \(entry.transfer) (\(entry.metadata), \(entry.bytes) bytes) as "
                    + "\(entry.storedAs ?? "dropped"), which holds \(holds ?? "nothing of ours")")
        }
    }
}
