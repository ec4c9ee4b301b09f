import Foundation

/// One partition/heal cycle's measurements (seconds; nil when it did not happen).
struct CycleTiming: Codable, Sendable {
    var cycle: Int
    /// `link-down` or `drop-inbound`.
    var method: String
    /// `phone` or `watch`: the namespace where the partition was made.
    var side: String
    var partitionSeconds: Double
    /// Link down → `phonectl status` shows linked=false.
    var phoneDetectionSeconds: Double?
    /// Link down → `watchctl status` shows linked=false.
    var watchDetectionSeconds: Double?
    /// Heal → both show linked=true (nil when neither side ever saw the link drop).
    var reconnectSeconds: Double?
    /// Heal → edits acknowledged before the heal visible on both sides.
    var convergenceSeconds: Double?
    /// The same moments from the daemons' own log lines ("watch unlinked" in phoned's log, "phone
    /// unlinked" in watchd's, before the heal; then "phone linked"): free of the admin socket's latency.
    var phoneDetectionLogSeconds: Double?
    var watchDetectionLogSeconds: Double?
    var reconnectLogSeconds: Double?
}

/// A kill, at seconds since the workload's start (the plot's samples).
struct KillInstant: Codable, Sendable, Equatable {
    /// `phoned` or `watchd`.
    var daemon: String
    var seconds: Double
}

/// An acknowledged edit, at seconds since the workload's start (the plot's samples).
struct AcknowledgedEdit: Codable, Sendable, Equatable {
    /// `watch` or `phone`: whose CLI made it.
    var side: String
    var seconds: Double
}

/// A tester's report: printed as text (the last line a one-line summary) or as JSON.
struct Report: Codable, Sendable {
    var test: String
    var mode: String
    var seed: UInt64
    var durationSeconds = 0.0
    var kills = 0
    var phoneKills = 0
    var watchKills = 0
    /// When each kill happened (kill test).
    var killSeconds: [KillInstant] = []
    /// When each acknowledged edit returned (both tests).
    var acknowledged: [AcknowledgedEdit] = []
    /// Daemon exits nobody asked for (each one a failure).
    var crashes: [String] = []
    var cycles: [CycleTiming] = []
    var dropCyclesNote: String?
    var checks = CheckResult()
    /// Per direction, when the test streamed files.
    var files: [FileFigures] = []
    var converged = false
    var finalConvergenceSeconds: Double?
    var notConvergedReason: String?
    var workDirectory: String
    var skipped: String?
    /// The endurance test's samples and verdicts.
    var endurance: EnduranceFigures?

    var passed: Bool {
        skipped != nil
            || (checks.passed && files.allSatisfy(\.passed) && converged && crashes.isEmpty && cyclesNotConverged == 0
                && endurance?.passed != false)
    }

    var cyclesNotConverged: Int { cycles.filter { $0.convergenceSeconds == nil }.count }

    var summary: String {
        let c = checks
        var parts: [String] = []
        if let endurance {
            parts.append("\(kills) kills, \(endurance.partitions) partitions")
        } else if test == "kill" {
            parts.append("\(kills) kills")
        } else {
            parts.append("\(cycles.count) cycles")
        }
        parts += [
            "\(c.attempted) attempted", "\(c.acknowledged) acknowledged", "\(c.lost) lost",
            "\(c.appliedTwice) applied twice", "\(c.outOfOrder) out of order", "\(c.resurrected) resurrected",
        ]
        if c.phantom > 0 { parts.append("\(c.phantom) phantom") }
        if c.malformed > 0 { parts.append("\(c.malformed) malformed") }
        if c.finalStateUnread { parts.append("could not read the phone's final state") }
        if !files.isEmpty {
            func total(_ figure: KeyPath<FileFigures, Int>) -> Int { files.reduce(0) { $0 + $1[keyPath: figure] } }
            parts.append(
                "files \(total(\.acknowledged)) acknowledged, \(total(\.delivered)) delivered, \(total(\.lost)) lost, "
                    + "\(total(\.duplicates)) duplicates, \(total(\.corrupt)) corrupt, \(total(\.unknown)) unknown")
        }
        if !crashes.isEmpty { parts.append("\(crashes.count) crashes") }
        if test == "partition" {
            parts.append(
                "detection median \(format(median(cycles.compactMap(\.phoneDetectionSeconds)))) phone / \(format(median(cycles.compactMap(\.watchDetectionSeconds)))) watch"
            )
            parts.append("reconnect median \(format(median(cycles.compactMap(\.reconnectSeconds))))")
            parts.append("convergence median \(format(median(cycles.compactMap(\.convergenceSeconds))))")
            if cyclesNotConverged > 0 { parts.append("\(cyclesNotConverged) cycles not converged") }
        }
        if let verdicts = endurance?.verdicts {
            let exceeded = verdicts.filter(\.failed).count
            let judged = verdicts.filter { $0.outcome == .withinBound }.count + exceeded
            parts.append("slopes: \(exceeded) of \(judged) judged over their bound")
        }
        parts.append("converged: \(converged ? "yes" : "no")")
        return "\(test)-test: " + parts.joined(separator: ", ")
    }

    /// The human-readable report.
    var text: String {
        if let skipped { return "\(test)-test: skipped: \(skipped)" }
        let c = checks
        var lines = [
            "\(test)-test (\(mode), seed \(seed)): \(String(format: "%.1f", durationSeconds)) s; logs in \(workDirectory)"
        ]
        if test == "kill" { lines.append("kills: \(kills) (phoned \(phoneKills), watchd \(watchKills))") }
        lines += [
            "edits: \(c.attempted) attempted, \(c.acknowledged) acknowledged, \(c.refused) refused, "
                + "\(c.unavailable) daemon down, \(c.indeterminate) indeterminate"
                + (c.malformed > 0 ? ", \(c.malformed) malformed (the tester's mistake: fails the run)" : ""),
            "  watch: \(c.watchAttempted) attempted, \(c.watchAcknowledged) acknowledged; "
                + "phone: \(c.phoneAttempted) attempted, \(c.phoneAcknowledged) acknowledged",
            "  \(c.discardedRuns) runs discarded; \(c.supersededByDiscard) acknowledged edits to them superseded by the discard",
            "phoned ingest: " + describe(c.ingestOutcomes) + "; merged via " + describe(c.acceptedVia)
                + "; \(c.externalChanges) \"external change\" lines (its own writes seen late: nobody else writes)",
            "checks: \(c.lost) lost, \(c.appliedTwice) applied twice, \(c.outOfOrder) out of order, "
                + "\(c.resurrected) resurrected, \(c.phantom) phantom",
        ]
        lines += files.map(\.line)
        if !cycles.isEmpty {
            let detected = cycles.filter { $0.phoneDetectionSeconds != nil || $0.watchDetectionSeconds != nil }.count
            lines.append(
                "cycles: \(cycles.count) (\(cycles.filter { $0.method == "link-down" }.count) link down, "
                    + "\(cycles.filter { $0.method == "drop-inbound" }.count) one-way drop); the link drop was seen in \(detected)"
            )
            if let dropCyclesNote { lines.append("  \(dropCyclesNote)") }
            lines.append("  detection (phone): " + stats(cycles.compactMap(\.phoneDetectionSeconds)))
            lines.append("  detection (watch): " + stats(cycles.compactMap(\.watchDetectionSeconds)))
            lines.append("  reconnect:         " + stats(cycles.compactMap(\.reconnectSeconds)))
            lines.append("  convergence:       " + stats(cycles.compactMap(\.convergenceSeconds)))
            lines.append("  from the daemons' logs:")
            lines.append("  detection (phone): " + stats(cycles.compactMap(\.phoneDetectionLogSeconds)))
            lines.append("  detection (watch): " + stats(cycles.compactMap(\.watchDetectionLogSeconds)))
            lines.append("  reconnect:         " + stats(cycles.compactMap(\.reconnectLogSeconds)))
        }
        lines += endurance?.lines ?? []
        for crash in crashes { lines.append("crash: \(crash)") }
        for problem in c.problems + files.flatMap(\.problems) { lines.append("  \(problem)") }
        if converged {
            lines.append("final convergence after \(format(finalConvergenceSeconds))")
        } else {
            lines.append("did not converge: \(notConvergedReason ?? "unknown")")
        }
        lines.append(passed ? "PASS" : "FAIL")
        lines.append(summary)
        return lines.joined(separator: "\n")
    }

    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var object = (try? JSONSerialization.jsonObject(with: encoder.encode(self))) as? [String: Any] ?? [:]
        object["passed"] = passed
        object["summary"] = summary
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    private func describe(_ counts: [String: Int]) -> String {
        counts.isEmpty
            ? "none" : counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
    }
}

func median(_ values: [Double]) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

func format(_ seconds: Double?) -> String {
    seconds.map { String(format: "%.2f s", $0) } ?? "n/a"
}

/// `n, min, median, p90, max` of a list of seconds.
func stats(_ values: [Double]) -> String {
    guard let middle = median(values), let low = values.min(), let high = values.max() else { return "none" }
    let sorted = values.sorted()
    let p90 = sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.9).rounded(.up)) - 1)]
    return "n=\(values.count) min \(format(low)), median \(format(middle)), p90 \(format(p90)), max \(format(high))"
}
