import AdminCommands
import Testing
import WorkoutModel

/// A request written by hand in the wrong shape is answered naming what is wrong and what was
/// expected, in the request's own terms (its verbs and fields), never with Swift's decoding text.
@Suite("Admin requests in the wrong shape: the unknown verb or field named, and what was expected")
struct AdminRequestProblemTests {
    static let run = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"

    /// The error `AdminWire.decode` answers `text` with, or nil when it decodes.
    static func problem<Command: AdminCommand>(_ text: String, as type: Command.Type) -> String? {
        switch AdminWire.decode(Array(text.utf8), as: Command.self) {
        case .success: nil
        case .failure(let error): error.description
        }
    }

    @Test("an unknown verb is named, with the daemon's verbs")
    func unknownVerb() throws {
        let message = try #require(Self.problem(#"{"verb":"nonsense"}"#, as: PhoneCommand.self))
        #expect(
            message.hasPrefix(#"malformed admin request: unknown verb "verb" (expected one of: status, "#), "\(message)"
        )
        #expect(message.contains("createSplit") && message.contains("launch, app)"), "\(message)")
        #expect(!message.contains("Invalid number of keys"), "\(message)")
        let watch = try #require(Self.problem(#"{"frobnicate":{}}"#, as: WatchCommand.self))
        #expect(watch.hasPrefix(#"malformed admin request: unknown verb "frobnicate" (expected one of: "#), "\(watch)")
        #expect(watch.contains("cancelTransfer") && watch.contains("waitSynced"), "\(watch)")
    }

    @Test("an unknown verb next to a known one, two verbs, or none")
    func verbCount() {
        #expect(
            Self.problem(#"{"status":{},"bogus":1}"#, as: PhoneCommand.self)?
                .hasPrefix(#"malformed admin request: unknown verb "bogus" (expected one of: status, "#) == true)
        #expect(
            Self.problem(#"{"status":{},"splits":{}}"#, as: PhoneCommand.self)
                == #"malformed admin request: one verb per request, got 2: "splits", "status""#)
        #expect(
            Self.problem("{}", as: PhoneCommand.self)?
                .hasPrefix("malformed admin request: no verb (expected one of: status, ") == true)
        #expect(
            Self.problem("[1]", as: PhoneCommand.self)
                == "malformed admin request: a request is a JSON object holding one verb, got an array")
    }

    @Test("an unknown verb inside a verb (a set verb, a live verb) is named with that level's verbs")
    func unknownNestedVerb() {
        #expect(
            Self.problem(#"{"set":{"_0":{"frobnicate":{"run":"\#(Self.run)"}}}}"#, as: WatchCommand.self)
                == #"malformed admin request: unknown verb "frobnicate" in "set._0" (expected one of: "#
                + "complete, undo, skip, reopen)")
        #expect(
            Self.problem(#"{"live":{"_0":{}}}"#, as: PhoneCommand.self)
                == #"malformed admin request: no verb in "live._0" (expected one of: open, advance, close, "#
                + "dismiss, show)")
    }

    @Test("an unknown field is named with the fields its verb takes, optional ones included")
    func unknownField() {
        #expect(
            Self.problem(#"{"show":{"id":"\#(Self.run)","verbose":true}}"#, as: PhoneCommand.self)
                == #"malformed admin request: unknown field "verbose" in "show" (expected: id)"#)
        #expect(
            Self.problem(#"{"workouts":{"all":true,"json":false,"lmit":5,"streamed":true}}"#, as: PhoneCommand.self)
                == #"malformed admin request: unknown field "lmit" in "workouts" (expected: after, all, json, "#
                + #"limit, since, streamed)"#)
        #expect(
            Self.problem(#"{"status":{"extra":null}}"#, as: WatchCommand.self)
                == #"malformed admin request: unknown field "extra" in "status" (expected no fields)"#)
        #expect(
            Self.problem(
                #"{"createSplit":{"exercises":[{"equipment":"","name":"A","targetReps":1,"targetSets":1,"#
                    + #""targetWeight":0,"tempo":3}],"name":"Legs"}}"#, as: PhoneCommand.self)
                == #"malformed admin request: unknown field "tempo" in "createSplit.exercises[0]" (expected: "#
                + "equipment, name, targetReps, targetSets, targetWeight)")
    }

    @Test("a field of the wrong type is named with the type expected and the one found")
    func wrongType() {
        #expect(
            Self.problem(#"{"show":{"id":5}}"#, as: PhoneCommand.self)
                == #"malformed admin request: field "show.id": expected a string, got a number"#)
        #expect(
            Self.problem(#"{"workouts":{"all":"yes","json":false}}"#, as: PhoneCommand.self)
                == #"malformed admin request: field "workouts.all": expected true or false, got a string"#)
        #expect(
            Self.problem(#"{"cancelTransfer":{"sequence":null}}"#, as: WatchCommand.self)
                == #"malformed admin request: field "cancelTransfer.sequence": expected an integer, got null"#)
        let notUUID = Self.problem(#"{"show":{"id":"nope"}}"#, as: PhoneCommand.self)
        #expect(notUUID?.hasPrefix(#"malformed admin request: field "show.id": "#) == true, "\(notUUID ?? "")")
        #expect(
            Self.problem(#"{"show":[]}"#, as: PhoneCommand.self)
                == #"malformed admin request: field "show": expected an object, got an array"#)
    }

    @Test("a missing field is named with its verb")
    func missingField() {
        #expect(
            Self.problem(#"{"show":{}}"#, as: PhoneCommand.self)
                == #"malformed admin request: missing field "id" in "show""#)
    }

    @Test("what the CLIs send still decodes: the check knows every field they write")
    func cliRequests() throws {
        let commands: [PhoneCommand] = [
            .status, .workouts(all: true, limit: 5, after: nil, since: "5m", json: true, streamed: true),
            .set(.complete(run: try #require(DocumentID(Self.run)), exercise: 1, set: 1, reps: nil, weight: 2.5)),
            .createSplit(
                name: "Legs",
                exercises: [.init(name: "A", equipment: "", targetSets: 1, targetReps: 1, targetWeight: 0)]),
        ]
        for command in commands {
            #expect(try AdminWire.decode(AdminWire.encode(command), as: PhoneCommand.self).get() == command)
        }
    }
}
