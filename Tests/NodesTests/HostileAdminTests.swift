import AdminCommands
import Testing

/// The admin socket takes any bytes, not only what phonectl and watchctl send: the daemons' one
/// decoder holds requests to the CLI's checks (every verb, with extreme values, against both
/// daemons: SimulationTests' `HostileAdminTests`).
@Suite("Hostile admin requests: the decoder")
struct HostileAdminTests {
    @Test("the requests that once killed a daemon are refused by the decoder, naming the value")
    func once() {
        let cases: [(String, String)] = [
            (#"{"workouts":{"all":true,"json":false,"limit":-1,"streamed":true}}"#, "--limit must be at least 1"),
            (#"{"data":{"_0":{"send":{"bytes":[1],"count":-9223372036854775808,"wantsReply":false}}}}"#, "--count"),
            (#"{"file":{"_0":{"send":{"metadata":"{}","path":"relative"}}}}"#, "absolute path"),
            (#"{"pushComplication":{"text":"\#(String(repeating: "x", count: 1_025))"}}"#, "over 1024"),
            (#"{"createSplit":{"exercises":[],"name":"Legs"}}"#, "at least one --exercise"),
        ]
        for (request, reason) in cases {
            guard case .failure(let error) = AdminWire.decode(Array(request.utf8), as: PhoneCommand.self) else {
                Issue.record("accepted: \(request.prefix(80))")
                continue
            }
            #expect(error.description.hasPrefix("invalid admin request: "), "\(error)")
            #expect(error.description.contains(reason), "\(error)")
        }
        let hugeAge = #"{"trace":{"_0":{"follow":false,"json":false,"since":"9999999999999999d"}}}"#
        #expect(throws: Never.self) { try AdminWire.decode(Array(hugeAge.utf8), as: WatchCommand.self).get() }
        #expect(TraceQuery(after: .max).filter(now: 0).since == .max)
    }
}
