import LinkProtocol
import Trace

/// What the shell knows that a status reply shows: the link's snapshot and the process's facts.
package struct ShellFacts: Equatable, Sendable {
    package var link: LinkStatus
    package var uptimeSeconds: Int
    package var journalCounts: [TraceEventKind: Int]
    /// phoned's listening port (0 for watchd).
    package var listenPort: Int

    /// Times a daemon has started with this state directory (`<state>/starts`).
    package var starts: Int
    /// The process's fsync and fdatasync latencies so far.
    package var fsyncLatency: LatencyHistogram
    /// The daemon's directories found on a read-only file system when the request came, named
    /// (`the documents directory /srv/docs`): every command that writes is refused meanwhile.
    package var readOnlyDirectories: [String]

    package init(
        link: LinkStatus, uptimeSeconds: Int, journalCounts: [TraceEventKind: Int], listenPort: Int = 0,
        starts: Int = 0, fsyncLatency: LatencyHistogram = LatencyHistogram(), readOnlyDirectories: [String] = []
    ) {
        self.link = link
        self.uptimeSeconds = uptimeSeconds
        self.journalCounts = journalCounts
        self.listenPort = listenPort
        self.starts = starts
        self.fsyncLatency = fsyncLatency
        self.readOnlyDirectories = readOnlyDirectories
    }

    /// Why a command that writes is refused now (a read-only file system), or nil.
    package var readOnlyRefusal: String? {
        guard !readOnlyDirectories.isEmpty else { return nil }
        let verb = readOnlyDirectories.count == 1 ? "is" : "are"
        return "\(readOnlyDirectories.joined(separator: " and ")) \(verb) on a read-only file system: nothing was "
            + "changed (status and reads still work; changes are taken again once it is writable)"
    }
}
