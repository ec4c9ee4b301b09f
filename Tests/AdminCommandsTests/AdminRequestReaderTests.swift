import AdminCommands
import Foundation
import Testing
import WorkoutModel

@Suite("The admin requests read by hand: the same command JSONDecoder gives, or left to it")
struct AdminRequestReaderTests {
    static let run = DocumentID("3F2504E0-4F89-11D3-9A0C-0305E82C3301")!

    static func hand<Command: AdminCommand>(_ text: String, as type: Command.Type) -> Command? {
        Array(text.utf8).withUnsafeBufferPointer(Command.readByHand)
    }

    static func decoder<Command: AdminCommand>(_ text: String, as type: Command.Type) -> Command? {
        try? JSONDecoder().decode(Command.self, from: Data(text.utf8))
    }

    @Test(
        "what the CLIs send is read by hand, as JSONDecoder reads it",
        arguments: [
            WatchCommand.status, .waitSynced(milliseconds: 10_000),
            .set(.complete(run: run, exercise: 1, set: 2, reps: nil, weight: nil)),
            .set(.complete(run: run, exercise: 3, set: 1, reps: 5, weight: 102.5)),
            .set(.complete(run: run, exercise: 1, set: 1, reps: 0, weight: 0)),
            .set(.undo(run: run, exercise: 2, set: 4)), .set(.skip(run: run, exercise: 1)),
            .set(.reopen(run: run, exercise: 7)),
        ])
    func watchCommands(command: WatchCommand) throws {
        let text = String(decoding: AdminWire.encode(command), as: UTF8.self)
        #expect(Self.hand(text, as: WatchCommand.self) == command, "\(text)")
        #expect(Self.decoder(text, as: WatchCommand.self) == command)
        #expect(try AdminWire.decode(Array(text.utf8), as: WatchCommand.self).get() == command)
    }

    @Test("phonectl's status and set verbs too; its grammar has no wait")
    func phoneCommands() throws {
        for command in [PhoneCommand.status, .set(.undo(run: Self.run, exercise: 1, set: 1))] {
            let text = String(decoding: AdminWire.encode(command), as: UTF8.self)
            #expect(Self.hand(text, as: PhoneCommand.self) == command, "\(text)")
        }
        #expect(Self.hand(#"{"waitSynced":{"milliseconds":5}}"#, as: PhoneCommand.self) == nil)
    }

    @Test("spellings by hand: space, any key order, null for an absent value, escapes, lower-case IDs")
    func variations() {
        let lower = Self.run.rawValue.lowercased()
        let escaped = Self.run.rawValue.replacingOccurrences(of: "-", with: #"\u002d"#)
        let texts = [
            #" { "set" : { "_0" : { "complete" : { "set" : 2, "reps" : null, "exercise" : 1, "run" : "\#(lower)" } } } } "#,
            #"{"set":{"_0":{"complete":{"run":"\#(escaped)","exercise":1,"set":2,"weight":null}}}}"#,
            "{\"status\":{}}\n",
            #"{"waitSynced":{"milliseconds":-1}}"#,
        ]
        for text in texts {
            let hand = Self.hand(text, as: WatchCommand.self)
            #expect(hand != nil, "\(text)")
            #expect(hand == Self.decoder(text, as: WatchCommand.self), "\(text)")
        }
    }

    /// Each is left to `JSONDecoder` (nil here), which accepts some (ignoring a key the case does not
    /// have) and refuses the others with its own error.
    @Test(
        "anything else is left to JSONDecoder",
        arguments: [
            #"{"status":{},"sync":{}}"#, #"{"status":{"x":1}}"#, #"{"status":{}} x"#, #"{"status":[]}"#,
            #"{"set":{"_0":{"complete":{"run":"3F2504E0-4F89-11D3-9A0C-0305E82C3301","exercise":1}}}}"#,
            #"{"set":{"_0":{"complete":{"run":"3F2504E0-4F89-11D3-9A0C-0305E82C3301","exercise":1,"set":1,"set":2}}}}"#,
            #"{"set":{"_0":{"complete":{"run":"3F2504E0-4F89-11D3-9A0C-0305E82C3301","exercise":1.0,"set":1}}}}"#,
            #"{"set":{"_0":{"undo":{"run":"3F2504E0-4F89-11D3-9A0C-0305E82C3301","exercise":1,"set":1,"reps":3}}}}"#,
            #"{"set":{"_0":{"skip":{"run":"3F2504E0-4F89-11D3-9A0C-0305E82C3301","exercise":1,"set":1}}}}"#,
            #"{"set":{"_0":{"skip":{"run":"not a uuid","exercise":1}}}}"#,
            #"{"set":{"_0":{"skip":{"run":null,"exercise":1}}}}"#,
            #"{"set":{"_0":{"finish":{"run":"3F2504E0-4F89-11D3-9A0C-0305E82C3301"}}}}"#,
            #"{"set":{"_1":{"skip":{"run":"3F2504E0-4F89-11D3-9A0C-0305E82C3301","exercise":1}}}}"#,
            #"{"waitSynced":{"milliseconds":1,"extra":2}}"#, #"{"waitSynced":{}}"#, #"{"workouts":{}}"#, "", "{",
        ])
    func leftToDecoder(text: String) {
        #expect(Self.hand(text, as: WatchCommand.self) == nil)
        #expect(Self.hand(text, as: PhoneCommand.self) == nil)
    }

    @Test("a request read by hand is still validated: a set position of 0 is refused as from JSONDecoder")
    func validated() {
        let text = #"{"set":{"_0":{"undo":{"run":"3F2504E0-4F89-11D3-9A0C-0305E82C3301","exercise":1,"set":0}}}}"#
        #expect(Self.hand(text, as: WatchCommand.self) != nil)
        guard case .failure(let error) = AdminWire.decode(Array(text.utf8), as: WatchCommand.self) else {
            Issue.record("accepted")
            return
        }
        #expect(error.description.contains("SET counts from 1"), "\(error)")
    }
}

@Suite("Admin responses read by hand, as the CLIs read them: JSONDecoder's value, or left to it")
struct AdminResponseReaderTests {
    static func hand(_ text: String) -> AdminResponse? {
        Array(text.utf8).withUnsafeBufferPointer(AdminResponse.readByHand)
    }

    @Test("every response the daemons write reads back by hand")
    func written() {
        var named = AdminResponse.ok(text: "synced\n", json: #"{"synced":true,"waitedMilliseconds":3}"#)
        named.daemon = "watchd"
        let responses = [
            named, .ok(), .refused("run 1 is being edited on the phone; try again"), .error("malformed: \"x\"\n\t"),
            .chunk(text: "a line — ünïcode\n", json: #"[{"a":"\\/"}]"#), .ok(text: "", json: ""),
        ]
        for response in responses {
            let line = String(decoding: response.encoded, as: UTF8.self)
            #expect(Self.hand(line) == response, "\(line)")
            #expect(Self.hand(line) == (try? JSONDecoder().decode(AdminResponse.self, from: Data(line.utf8))))
        }
    }

    @Test("other spellings JSONDecoder takes alike: space, key order, null, false")
    func variations() {
        for text in [
            #" { "text" : null , "status" : "refused", "message": "no", "more": false } "#,
            #"{"more":null,"status":"ok","json":"{}"}"#,
        ] {
            let hand = Self.hand(text)
            #expect(hand != nil && hand == (try? JSONDecoder().decode(AdminResponse.self, from: Data(text.utf8))))
        }
    }

    @Test(
        "anything else is left to JSONDecoder",
        arguments: [
            #"{"status":"maybe"}"#, #"{"text":"x"}"#, #"{"status":"ok","status":"ok"}"#, #"{"status":"ok","x":1}"#,
            #"{"status":"ok","more":1}"#, #"{"status":"ok"} {}"#, #"{"status":"ok","text":"\ud83d\ude00"}"#, "",
        ])
    func leftToDecoder(text: String) {
        #expect(Self.hand(text) == nil)
    }
}
