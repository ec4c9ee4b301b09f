import AdminCommands
import Foundation
import LinkProtocol
import TestSupport
import Testing

/// `<state>/received-files` between the real daemons: it keeps the newest received files that fit
/// `receivedFilesQuotaBytes` and removes the oldest, so it stays bounded however many files arrive,
/// while every file is still handed to the app once and the files kept are intact.
@Suite("The received files stay within their quota")
struct ReceivedFilesQuotaTests {
    /// Each file's size: 5 fit the quota below, the 6th does not.
    private static let fileBytes = 40_000
    private static let quotaBytes = 200_000
    private static let filesPerSide = 12

    /// A file's content: its name, then seeded bytes, `fileBytes` in all.
    private static func content(_ name: String, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        var bytes = Array("\(name)\n".utf8)
        while bytes.count < fileBytes { bytes.append(UInt8(truncatingIfNeeded: generator.next())) }
        return bytes
    }

    /// The files in `directory` by the name in their first line, and their total size.
    private static func kept(_ directory: String) throws -> (files: [String: [UInt8]], bytes: Int) {
        var files: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where !name.hasPrefix(".") {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(name)")))
            files[String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)] = bytes
        }
        return (files, files.values.reduce(0) { $0 + $1.count })
    }

    @Test("12 files each way through the CLIs: each side keeps the newest 5 (200 kB), intact; all 12 reached the app")
    func boundedBothWays() async throws {
        let system = try SyncSystem("received-quota")
        let quota = ["receivedFilesQuotaBytes": "\(Self.quotaBytes)"]
        try system.writePhonedConfig(quota)
        try system.writeWatchdConfig(quota)
        try await system.startBoth()
        try await system.waitUntilLinked()

        var sent: [String: [(name: String, bytes: [UInt8])]] = ["phone": [], "watch": []]
        for index in 0..<Self.filesPerSide {
            for side in ["phone", "watch"] {
                let name = "\(side)-\(index)"
                let bytes = Self.content(name, seed: UInt64(index) + (side == "phone" ? 100 : 200))
                let path = system.directory.appending(name)
                try Data(bytes).write(to: URL(fileURLWithPath: path))
                let arguments = ["file", "send", path, "--metadata", #"{"name":"\#(name)"}"#, "--json"]
                let result =
                    side == "phone" ? try await system.phonectl(arguments) : try await system.watchctl(arguments)
                let _: AdminReply.FileQueued = try result.decode()
                sent[side, default: []].append((name, bytes))
            }
        }
        try await system.eventually("both senders heard every file finished", timeout: .seconds(120)) {
            let phone: [AdminReply.FileProgress] = try await system.phonectl("file", "list", "--json").decode()
            let watch: [AdminReply.FileProgress] = try await system.watchctl("file", "list", "--json").decode()
            return phone.isEmpty && watch.isEmpty
        }

        let receivers = [
            ("watch", "phone", system.watchStateDirectory, system.watchdLog),
            ("phone", "watch", system.phoneStateDirectory, system.phonedLog),
        ]
        for (receiver, sender, state, log) in receivers {
            let (files, bytes) = try Self.kept("\(state)/received-files")
            #expect(bytes <= Self.quotaBytes, "\(receiver) keeps \(bytes) bytes in \(files.count) files")
            #expect(files.count == Self.quotaBytes / Self.fileBytes, "\(receiver) keeps \(files.keys.sorted())")
            // The newest are the ones kept, byte for byte.
            let newest = sent[sender, default: []].suffix(Self.quotaBytes / Self.fileBytes)
            #expect(Set(files.keys) == Set(newest.map(\.name)), "\(receiver) keeps \(files.keys.sorted())")
            #expect(newest.allSatisfy { files[$0.name] == $0.bytes }, "\(receiver)'s kept files are intact")
            // Every file reached the app once; each one removed is logged, naming it.
            #expect(log.components(separatedBy: "msg=\"file received\"").count - 1 == Self.filesPerSide)
            let removed = log.split(separator: "\n").filter { $0.contains("msg=\"received file removed\"") }
            #expect(removed.count == Self.filesPerSide - files.count, "\(receiver): \(removed)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: "\(state)/inbox").isEmpty)
        }
    }
}
