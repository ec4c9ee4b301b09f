import Foundation

/// Reads what an endurance sample holds: each running daemon's RSS and threads (/proc/PID/status),
/// its open descriptors (/proc/PID/fd), and the bytes and documents under each directory.
struct ResourceSampler: Sendable {
    let harness: Harness
    let began: ContinuousClock.Instant

    /// One sample now.
    func sample() -> ResourceSample {
        var daemons: [String: ProcessSample] = [:]
        for name in EnduranceVerdicts.daemons {
            if let process = Self.process(pidFile: "\(harness.work)/pids/\(name).pid") { daemons[name] = process }
        }
        // A run's spare file (phoned's `spare-documents/`) is one per run kept: it counts with the documents.
        let spares = Self.directory("\(harness.phoneStateDirectory)/spare-documents")
        var phoneState = Self.directory(harness.phoneStateDirectory)
        phoneState.bytes -= spares.bytes
        phoneState.documents -= spares.documents
        var documents = Self.directory(harness.documentsDirectory)
        documents.bytes += spares.bytes
        return ResourceSample(
            seconds: (ContinuousClock.now - began).seconds, daemons: daemons,
            directories: [
                "phone-state": phoneState, "watch-state": Self.directory(harness.watchStateDirectory),
                "documents": documents, "watch-cache": Self.directory("\(harness.work)/watch-cache"),
            ])
    }

    /// The process in `pidFile`, nil when there is none or it is gone.
    static func process(pidFile: String) -> ProcessSample? {
        guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)),
            let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
        else { return nil }
        let fields = statusFields(status)
        guard let rss = fields["VmRSS"], let threads = fields["Threads"] else { return nil }
        return ProcessSample(pid: pid, rssBytes: rss * 1024, fileDescriptors: descriptors.count, threads: threads)
    }

    /// `VmRSS: 1976 kB` → ["VmRSS": 1976]: each line's first number.
    static func statusFields(_ text: String) -> [String: Int] {
        var fields: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let words = line[line.index(after: colon)...].split { $0 == " " || $0 == "\t" }
            if let first = words.first, let value = Int(first) { fields[String(line[..<colon])] = value }
        }
        return fields
    }

    /// The regular files under `path` (hidden ones too): total bytes, and how many are `.json`.
    static func directory(_ path: String) -> DirectorySample {
        var sample = DirectorySample(bytes: 0, documents: 0)
        guard let walker = FileManager.default.enumerator(atPath: path) else { return sample }
        while let relative = walker.nextObject() as? String {
            guard let attributes = walker.fileAttributes, attributes[.type] as? FileAttributeType == .typeRegular
            else { continue }
            sample.bytes += (attributes[.size] as? NSNumber)?.intValue ?? 0
            if relative.hasSuffix(".json") { sample.documents += 1 }
        }
        return sample
    }
}
