import AdminCommands
import Nodes
import Simulation

extension Simulator {
    /// The reply to `request`, simulated time moving a millisecond at a time until it comes (at most
    /// `limit`), with the milliseconds that passed: it came in the last of them.
    func awaitReply(
        to request: AdminRequestID, within limit: Duration = .seconds(5)
    ) -> (response: AdminResponse, milliseconds: Double)? {
        var waited = 0
        while Duration.milliseconds(waited) <= limit {
            if let response = reply(to: request) { return (response, Double(waited)) }
            advance(by: .milliseconds(1))
            waited += 1
        }
        return nil
    }
}

/// Whether `measured` milliseconds end in the last of `elapsed` (`awaitReply`): a reply may come
/// within a millisecond, after a durable write that lands in microseconds.
func inLastMillisecond(_ measured: Double, of elapsed: Double) -> Bool {
    measured > elapsed - 1 && measured <= elapsed
}
