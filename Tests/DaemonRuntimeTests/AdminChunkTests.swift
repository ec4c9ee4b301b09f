import AdminClient
import AdminCommands
import DaemonRuntime
import Foundation
import Glibc
import LinkRuntime
import POSIX
import Synchronization
import TestSupport
import Testing

/// How a chunking handler's sending stopped: nil while it goes on, true after its last response,
/// false when the client went away.
private final class SenderEnd: Sendable {
    private let state = Mutex<Bool?>(nil)
    var value: Bool? { state.withLock { $0 } }
    func record(_ ended: Bool) { state.withLock { $0 = ended } }
}

/// Starts an `AdminServer` at `path` whose handler answers every request with `pieces` chunks of
/// `text` (each sent once the client took the one before) and a last response "end"; `ended`
/// records how the sending stopped.
private func startChunkingServer(
    on loop: EventLoop, path: String, pieces: Int, text: @escaping @Sendable (Int) -> String,
    ended: SenderEnd
) async throws -> AdminServer<StubCommand> {
    try await loop.submit {
        try AdminServer(loop: loop, path: path) { (_: StubCommand, respond) in
            func send(_ index: Int) {
                guard index < pieces else {
                    ended.record(true)
                    return respond(.ok(text: "end", json: "]"))
                }
                respond.chunk(.chunk(text: text(index), json: index == 0 ? "[\(index)" : ",\(index)")) { open in
                    guard open else { return ended.record(false) }
                    send(index + 1)
                }
            }
            send(0)
        }
    }
}

@Suite("Admin socket: a long reply in chunks, each sent once the client took the last")
struct AdminChunkTests {
    @Test("a chunked reply is several response lines; the client hands each chunk over, or puts them together")
    func chunksArriveInOrder() async throws {
        let directory = try TemporaryDirectory("admin-chunks")
        let path = directory.appending("phoned.sock")
        let loop = try EventLoop(name: "admin-chunks")
        defer { loop.shutdown() }
        let ended = SenderEnd()
        let server = try await startChunkingServer(
            on: loop, path: path, pieces: 3, text: { "line \($0)\n" }, ended: ended)

        let raw = try UnixSocketClient.request(path: path, bytes: AdminWire.encode(StubCommand.status))
        let lines = raw.split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self) }
        #expect(
            lines == [
                #"{"daemon":"phoned","json":"[0","more":true,"status":"ok","text":"line 0\n"}"#,
                #"{"daemon":"phoned","json":",1","more":true,"status":"ok","text":"line 1\n"}"#,
                #"{"daemon":"phoned","json":",2","more":true,"status":"ok","text":"line 2\n"}"#,
                #"{"daemon":"phoned","json":"]","status":"ok","text":"end"}"#,
            ])
        #expect(raw.last == 0x0A)

        var chunks: [AdminResponse] = []
        let last = try AdminClient.send(path: path, request: AdminWire.encode(StubCommand.status)) { chunks.append($0) }
        #expect(chunks.map(\.text) == ["line 0\n", "line 1\n", "line 2\n"])
        #expect(last == .ok(text: "end", json: "]").from("phoned"))

        let whole = try AdminClient.send(path: path, command: StubCommand.status)
        #expect(whole == .ok(text: "line 0\nline 1\nline 2\nend", json: "[0,1,2]").from("phoned"))
        #expect(ended.value == true)
        _ = server
    }

    @Test("a client that goes away mid-reply stops the sender: it hears the client is gone")
    func clientGoneStopsTheSender() async throws {
        let directory = try TemporaryDirectory("admin-gone")
        let path = directory.appending("phoned.sock")
        let loop = try EventLoop(name: "admin-gone")
        defer { loop.shutdown() }
        let ended = SenderEnd()
        // Endless for any client that keeps reading: 64 KiB a chunk, a million chunks.
        let piece = String(repeating: "x", count: 64 * 1024)
        let server = try await startChunkingServer(
            on: loop, path: path, pieces: 1_000_000, text: { _ in piece }, ended: ended)

        // Reads the first response line, then leaves without reading the rest.
        let request = AdminWire.encode(StubCommand.status)
        var first: [UInt8] = []
        try UnixSocketClient.stream(path: path, bytes: request) { bytes in
            guard let newline = bytes.firstIndex(of: 0x0A) else {
                first += bytes
                return true
            }
            first += bytes[..<newline]
            return false
        }
        let response = try JSONDecoder().decode(AdminResponse.self, from: Data(first))
        #expect(response.more == true && response.text == piece)

        let deadline = ContinuousClock.now + .seconds(30)
        while ended.value == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(ended.value == false, "the sender should hear that the client went away")
        _ = server
    }

    @Test("the CLI prints each chunk as it arrives (text, or the pieces of the one JSON document), then the rest")
    func cliPrintsChunksAsTheyCome() async throws {
        let directory = try TemporaryDirectory("admin-cli-chunks")
        let path = directory.appending("phoned.sock")
        let loop = try EventLoop(name: "admin-cli-chunks")
        defer { loop.shutdown() }
        let server = try await startChunkingServer(
            on: loop, path: path, pieces: 2, text: { "line \($0)\n" }, ended: SenderEnd())
        let runner = phonectlRunner()
        var printed: [String] = []
        let outcome = runner.run(["status", "--socket", path], environment: [:]) { printed.append($0) }
        #expect(printed == ["line 0\n", "line 1\n"])
        #expect(outcome == CLIRunner.Outcome(exitCode: 0, standardOutput: "end\n"))
        printed = []
        let json = runner.run(["status", "--json", "--socket", path], environment: [:]) { printed.append($0) }
        #expect(printed.joined() + json.standardOutput == "[0,1]\n")
        // Without a place to print as they come, the outcome holds the whole reply.
        #expect(
            runner.run(["status", "--socket", path], environment: [:])
                == CLIRunner.Outcome(exitCode: 0, standardOutput: "line 0\nline 1\nend\n"))
        _ = server
    }

    @Test("a connection that closes before the last response is a malformed reply, not a short one")
    func cutOffReply() async throws {
        let directory = try TemporaryDirectory("admin-cut")
        let path = directory.appending("odd.sock")
        let loop = try EventLoop(name: "admin-cut")
        defer { loop.shutdown() }
        let listener = try await loop.submit {
            try loop.listenUnix(path: path) { connection in
                connection.onEndOfInput = {
                    connection.write(AdminResponse.chunk(text: "a\n", json: "[").encoded)
                    connection.closeAfterFlush()
                }
            }
        }
        #expect(
            throws: AdminClientError.malformedResponse(
                path: path, detail: "the connection closed before the reply ended")
        ) {
            try AdminClient.send(path: path, command: StubCommand.status)
        }
        _ = listener
    }
}
