import DurableFiles
import Foundation
import Nodes

/// `<state>/received-files`, where the app keeps the files it received: a file moves in from the
/// inbox durably, then the oldest others are removed past the quota (`ReceivedFilesQuota` decides
/// which), each removal logged as `received file removed`.
struct ReceivedFilesFolder: Sendable {
    let path: String
    let quota: ReceivedFilesQuota
    let logger: Logger

    /// Moves `source` (a verified inbox file) in as `name`, then trims the folder to the quota. A
    /// file that cannot be listed or removed is logged and left (the next keep tries again); only a
    /// failed move throws, as the file would otherwise be lost.
    func keep(_ source: String, as name: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try AtomicFile.moveDurably(source, to: "\(path)/\(name)")
        for file in quota.removals(listed(), newest: name) {
            do {
                try FileManager.default.removeItem(atPath: "\(path)/\(file)")
                logger.notice(
                    "received file removed", ["name": file, "reason": "receivedFilesQuotaBytes \(quota.maximumBytes)"],
                    component: "file")
            } catch {
                logger.warning("received file not removed", ["name": file, "reason": "\(error)"], component: "file")
            }
        }
    }

    /// The folder's files with their sizes and arrival times; hidden files are not the app's.
    private func listed() -> [ReceivedFilesQuota.Kept] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.compactMap { name in
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: "\(path)/\(name)"),
                let bytes = (attributes[.size] as? NSNumber)?.intValue,
                let modified = attributes[.modificationDate] as? Date
            else { return nil }
            let nanoseconds = Int64((modified.timeIntervalSince1970 * 1e9).rounded())
            return ReceivedFilesQuota.Kept(name: name, bytes: bytes, arrivedNanoseconds: nanoseconds)
        }
    }
}
