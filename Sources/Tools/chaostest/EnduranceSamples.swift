/// One daemon's resources at one sample (from /proc/PID/status and /proc/PID/fd).
struct ProcessSample: Codable, Sendable, Equatable {
    var pid: Int32
    var rssBytes: Int
    var fileDescriptors: Int
    var threads: Int
}

/// A directory's size at one sample: the bytes of its regular files, and how many of them are
/// documents (`.json`), for the per-document figure.
struct DirectorySample: Codable, Sendable, Equatable {
    var bytes: Int
    var documents: Int
}

/// Everything sampled at one instant of an endurance run. A daemon that is down (killed and not
/// yet restarted) is absent from `daemons`.
struct ResourceSample: Codable, Sendable, Equatable {
    /// Seconds since the workload began.
    var seconds: Double
    /// `phoned`, `watchd`.
    var daemons: [String: ProcessSample]
    /// `phone-state`, `watch-state` (state), `documents`, `watch-cache` (documents the user keeps).
    var directories: [String: DirectorySample]
}

/// The endurance run's verdicts from its samples: each series, its bound, fitted over the second
/// half (docs/CHAOS.md, "The endurance test").
enum EnduranceVerdicts {
    static let daemons = ["phoned", "watchd"]
    static let stateDirectories = ["phone-state", "watch-state"]
    static let documentDirectories = ["documents", "watch-cache"]

    static func judge(_ samples: [ResourceSample]) -> [TrendVerdict] {
        var verdicts: [TrendVerdict] = []
        func series(_ value: (ResourceSample) -> Double?) -> [TrendPoint] {
            samples.compactMap { sample in value(sample).map { TrendPoint(hours: sample.seconds / 3600, value: $0) } }
        }
        func process(_ daemon: String, _ value: (ProcessSample) -> Int) -> [TrendPoint] {
            samples.compactMap { sample in
                sample.daemons[daemon].map {
                    TrendPoint(hours: sample.seconds / 3600, value: Double(value($0)), life: $0.pid)
                }
            }
        }
        for daemon in daemons {
            verdicts.append(TrendVerdict.judge(process(daemon, \.rssBytes), against: .rss(daemon)))
            verdicts.append(TrendVerdict.judge(process(daemon, \.fileDescriptors), against: .count(daemon, "fds")))
            verdicts.append(TrendVerdict.judge(process(daemon, \.threads), against: .count(daemon, "threads")))
        }
        for directory in stateDirectories {
            verdicts.append(
                TrendVerdict.judge(
                    series { $0.directories[directory].map { Double($0.bytes) } }, against: .stateBytes(directory)))
        }
        for directory in documentDirectories {
            let perDocument = series { sample in
                sample.directories[directory].flatMap {
                    $0.documents > 0 ? Double($0.bytes) / Double($0.documents) : nil
                }
            }
            verdicts.append(TrendVerdict.judge(perDocument, against: .bytesPerDocument(directory)))
        }
        return verdicts
    }

    /// The samples as CSV: one row per sample, a column per figure (empty while a daemon is down).
    static func csv(_ samples: [ResourceSample]) -> String {
        var header = ["seconds"]
        for daemon in daemons { header += ["rss", "fds", "threads"].map { "\(daemon)_\($0)" } }
        for directory in stateDirectories + documentDirectories {
            header += ["\(directory)_bytes", "\(directory)_documents"]
        }
        var rows = [header.joined(separator: ",")]
        for sample in samples {
            var row = [String(format: "%.1f", sample.seconds)]
            for daemon in daemons {
                let process = sample.daemons[daemon]
                row += [process?.rssBytes, process?.fileDescriptors, process?.threads].map { $0.map(String.init) ?? "" }
            }
            for directory in stateDirectories + documentDirectories {
                let folder = sample.directories[directory]
                row += [folder?.bytes, folder?.documents].map { $0.map(String.init) ?? "" }
            }
            rows.append(row.joined(separator: ","))
        }
        return rows.joined(separator: "\n") + "\n"
    }
}
