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

    package init(
        link: LinkStatus, uptimeSeconds: Int, journalCounts: [TraceEventKind: Int], listenPort: Int = 0,
        starts: Int = 0, fsyncLatency: LatencyHistogram = LatencyHistogram()
    ) {
        self.link = link
        self.uptimeSeconds = uptimeSeconds
        self.journalCounts = journalCounts
        self.listenPort = listenPort
        self.starts = starts
        self.fsyncLatency = fsyncLatency
    }
}
