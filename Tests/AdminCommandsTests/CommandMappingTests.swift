import AdminCommands
import ArgumentParsing
import Testing
import WorkoutModel

/// Every leaf of a grammar maps to a command case, and that command crosses the admin wire intact:
/// the CLI cannot accept a verb the daemon's exhaustive switch does not handle.
@Suite("phonectl and watchctl verbs as typed commands")
struct CommandMappingTests {
    static let id = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"

    /// Every leaf command below `spec`, as its path of words.
    static func leaves(of spec: CommandSpec, path: [String] = []) -> [(path: [String], spec: CommandSpec)] {
        spec.subcommands.isEmpty
            ? [(path, spec)] : spec.subcommands.flatMap { leaves(of: $0, path: path + [$0.name]) }
    }

    /// A valid command line for `leaf`: every argument and option gets a value of its type.
    static func arguments(_ leaf: (path: [String], spec: CommandSpec)) -> [String] {
        var words = leaf.path
        for argument in leaf.spec.arguments {
            switch argument.name {
            case "exercise", "set", "sequence": words.append("2")
            case "position": words.append("up")
            case "payload": words.append("00ff")
            case "path": words.append("/dev/null")
            default: words.append(id)
            }
        }
        for option in leaf.spec.options where !["socket", "config"].contains(option.name) {
            let value: String
            switch option.name {
            case "exercise": value = leaf.path == ["live", "open"] ? "1" : "Row:1x5@40:cable"
            case "name", "failure": value = "Legs"
            case "metadata": value = "{}"
            case "unit": value = "lb"
            case "after", "run": value = id
            case "since", "until": value = "5m"
            case "weight": value = "42.5"
            default: value = "3"
            }
            words += ["--\(option.name)", value]
        }
        return words + leaf.spec.flags.map { "--\($0.name)" }
    }

    /// Parses every leaf of `spec` into `Command` and round-trips it; returns the encoded commands.
    static func check<Command: AdminCommand>(_ spec: CommandSpec, as type: Command.Type) throws -> Set<[UInt8]> {
        var encoded: Set<[UInt8]> = []
        for leaf in leaves(of: spec) {
            let words = arguments(leaf)
            guard case .command(let parsed) = spec.parse(words) else {
                Issue.record("\(words) did not parse")
                continue
            }
            let command = try Command(parsed)
            let bytes = AdminWire.encode(command)
            #expect(try AdminWire.decode(bytes, as: Command.self).get() == command, "\(words)")
            encoded.insert(bytes)
        }
        return encoded
    }

    @Test("every phonectl verb maps to its own PhoneCommand case and round-trips through Codable")
    func phoneVerbs() throws {
        let leaves = Self.leaves(of: PhoneCommands.spec)
        #expect(leaves.count > 25)
        #expect(try Self.check(PhoneCommands.spec, as: PhoneCommand.self).count == leaves.count)
    }

    @Test("every watchctl verb maps to its own WatchCommand case and round-trips through Codable")
    func watchVerbs() throws {
        let leaves = Self.leaves(of: WatchCommands.spec)
        #expect(leaves.count > 20)
        #expect(try Self.check(WatchCommands.spec, as: WatchCommand.self).count == leaves.count)
    }

    @Test("values are typed in the CLI")
    func typedValues() throws {
        func phone(_ words: [String]) throws -> PhoneCommand {
            guard case .command(let parsed) = PhoneCommands.spec.parse(words) else { throw UsageError("no parse") }
            return try PhoneCommand(parsed)
        }
        let run = try #require(DocumentID(Self.id))
        #expect(
            try phone(["complete", Self.id, "1", "2", "-w", "60"])
                == .set(.complete(run: run, exercise: 1, set: 2, reps: nil, weight: 60)))
        #expect(
            try phone(["split", "create", "-n", "Legs", "-e", "Squat:3x5@100:barbell"])
                == .createSplit(
                    name: "Legs",
                    exercises: [
                        ExerciseTemplate(
                            name: "Squat", equipment: "barbell", targetSets: 3, targetReps: 5, targetWeight: 100)
                    ]))
        // A colon may sit in a name or in the equipment: the first SETSxREPS@WEIGHT part divides them.
        #expect(
            try phone(["split", "create", "-n", "Push", "-e", "Bench: Incline:3x8@40:DB: 2 x 20 kg"])
                == .createSplit(
                    name: "Push",
                    exercises: [
                        ExerciseTemplate(
                            name: "Bench: Incline", equipment: "DB: 2 x 20 kg", targetSets: 3, targetReps: 8,
                            targetWeight: 40)
                    ]))
        #expect(try phone(["split", "edit", Self.id]) == .editSplit(id: run, name: nil, exercises: nil))
        #expect(
            try phone(["settings", "set", "--unit", "kg"]) == .setSettings(rest: nil, countdown: nil, unit: .kilograms))
        #expect(try phone(["live", "open", Self.id]) == .live(.open(run: run, exercise: nil)))
        // The wire form docs/PROTOCOL.md shows.
        #expect(
            String(decoding: AdminWire.encode(try phone(["live", "open", Self.id])), as: UTF8.self)
                == #"{"live":{"_0":{"open":{"run":"\#(Self.id)"}}}}"#)
    }

    @Test(
        "a value that does not convert is refused before anything is sent, naming the value",
        arguments: [
            (["discard", "not-a-uuid"], "run must be a UUID"),
            (["split", "create", "--name", "X", "-e", "Squat-3x5"], "NAME:SETSxREPS@WEIGHT"),
            (["split", "create", "--name", "X", "-e", "Squat:Front:3x5"], "NAME:SETSxREPS@WEIGHT"),
            (["settings", "set", "--unit", "stone"], "--unit must be kg or lb"),
            (["settings", "set", "--rest", "-1"], "--rest must be 0 to 3600 seconds, got -1"),
            (["settings", "set", "--countdown", "601"], "--countdown must be 0 to 600 seconds, got 601"),
            (["workouts", "--limit", "0"], "--limit must be at least 1"),
            (["complete", id, "one", "1"], "expected an integer"),
            // Splits phoned would write but no one could use (or its own reader would skip).
            (["split", "create", "--name", "  ", "-e", "Squat:3x5@100"], "--name must not be blank"),
            (["split", "create", "--name", "Legs", "-e", ":3x5@100"], "an exercise's name must not be blank"),
            (["split", "create", "--name", "Legs", "-e", "Squat:0x5@100"], "sets must be 1...100, got 0"),
            (["split", "create", "--name", "Legs", "-e", "Squat:3x-5@100"], "reps must not be negative"),
            (["split", "create", "--name", "Legs", "-e", "Squat:3x5@nan"], "weight must be a number from 0 to 100000"),
            (["split", "create", "--name", "Legs", "-e", "Squat:3x5@-1"], "weight must be a number from 0 to 100000"),
            (["split", "create", "--name", "Legs", "-e", "Squat:3x5@100001"], "weight must be a number from 0"),
            // A weight whose volume is no longer a number once the run ends (watchd died encoding it).
            (["complete", id, "1", "1", "--weight", "1e308"], "--weight must be a number from 0 to 100000"),
            (["complete", id, "1", "1", "--reps", "-1"], "--reps must not be negative"),
            (["complete", id, "-1", "1"], "EXERCISE counts from 1, got -1"),
            (["undo", id, "1", "0"], "SET counts from 1, got 0"),
            (["skip", id, "0"], "EXERCISE counts from 1, got 0"),
            (["split", "create", "--name", String(repeating: "x", count: 201), "-e", "Squat:3x5@1"], "201 bytes"),
            (["split", "edit", id, "--name", ""], "--name must not be blank"),
            (["split", "edit", id, "-e", "Squat:101x5@100"], "sets must be 1...100"),
            // Names are printed on terminals: no control characters (an escape could recolour one).
            (["split", "create", "--name", "a\nb", "-e", "Squat:3x5@1"], "--name must not hold control characters"),
            (["split", "create", "--name", "\u{1B}[31mred", "-e", "Squat:3x5@1"], "control characters"),
            (["split", "create", "--name", "Legs", "-e", "A\tB:3x5@1"], "an exercise's name must not hold control"),
            (["split", "create", "--name", "Legs", "-e", "Squat:3x5@1:bar\u{7F}"], "equipment must not hold control"),
        ])
    func phoneInvalidValues(words: [String], message: String) throws {
        Self.expectRefused(PhoneCommand.self, PhoneCommands.spec, words, message)
    }

    /// `words` parse, and `Command` refuses them with a usage error containing `message`.
    static func expectRefused<Command: AdminCommand>(
        _: Command.Type, _ spec: CommandSpec, _ words: [String], _ message: String
    ) {
        guard case .command(let parsed) = spec.parse(words) else {
            Issue.record("\(words) did not parse")
            return
        }
        #expect {
            try Command(parsed)
        } throws: { error in
            (error as? UsageError)?.message.contains(message) == true
        }
    }

    @Test("session end needs a failure reason a person can read: not blank, no control characters")
    func sessionEndReason() throws {
        for reason in ["", "  ", "bad\u{1B}[2J"] {
            Self.expectRefused(
                WatchCommand.self, WatchCommands.spec, ["session", "end", "--failure", reason], "--failure must not")
        }
        guard case .command(let parsed) = WatchCommands.spec.parse(["session", "end", "--failure", "heart rate lost"])
        else { throw UsageError("no parse") }
        #expect(try WatchCommand(parsed) == .endSession(failure: "heart rate lost"))
    }

    @Test("a split of more than 100 exercises is refused before anything is sent")
    func tooManyExercises() {
        let exercises: [String] = (1...101).flatMap { ["-e", "E\($0):1x1@1"] }
        Self.expectRefused(
            PhoneCommand.self, PhoneCommands.spec, ["split", "create", "--name", "Legs"] + exercises,
            "101 exercises is over 100")
    }

    @Test("trace bounds are typed as ages or UTC times, and the run as a UUID")
    func traceQuery() throws {
        guard
            case .command(let parsed) = PhoneCommands.spec.parse(
                ["trace", "--since", "5m", "--until", "2026-12-01T01:02:03Z", "--run", Self.id, "--json"])
        else { throw UsageError("no parse") }
        let query = TraceQuery(since: "5m", until: "2026-12-01T01:02:03Z", run: DocumentID(Self.id), json: true)
        #expect(try PhoneCommand(parsed) == .trace(query))
        let filter = query.filter(now: 1_796_086_923_000_000 + 300_000_000)
        #expect(filter.since == 1_796_086_923_000_000 && filter.until == 1_796_086_923_000_000)
        #expect(filter.run == DocumentID(Self.id)?.description)
        // --follow's later rounds: only what is newer than the last line printed, never older than --since.
        let now: Int64 = 1_796_086_923_000_000
        #expect(TraceQuery(since: "5m", after: now - 1).filter(now: now).since == now)
        #expect(TraceQuery(since: "5m", after: 7).filter(now: now).since == now - 300_000_000)
        #expect(TraceQuery(after: 7).filter(now: now).since == 8)
    }

    @Test(
        "watchctl values that do not convert are refused before anything is sent",
        arguments: [
            ["wrist", "sideways"], ["queue", "cancel", "x"], ["show", "nope"], ["live", "advance", id, "-r", "many"],
            ["trace", "--since", "yesterday"], ["trace", "--until", "5 minutes"], ["trace", "--run", "nope"],
            ["complete", id, "1", "1", "--weight", "1e308"], ["complete", id, "1", "1", "--reps", "-1"],
            ["live", "advance", id, "--weight", "100001"],
        ])
    func watchInvalidValues(words: [String]) throws {
        guard case .command(let parsed) = WatchCommands.spec.parse(words) else {
            Issue.record("\(words) did not parse")
            return
        }
        #expect(throws: UsageError.self) { try WatchCommand(parsed) }
    }

    @Test("the write verbs' --json replies keep their documented shapes")
    func replyShapes() throws {
        func json(_ value: some Encodable) -> String {
            String(decoding: DocumentCoder.encodeCompact(value), as: UTF8.self)
        }
        let id = try #require(DocumentID(Self.id))
        #expect(json(AdminReply.Acknowledged()) == #"{"ok":true}"#)
        #expect(json(AdminReply.Created(id: id)) == #"{"id":"\#(Self.id)"}"#)
        #expect(json(AdminReply.Tombstoned(tombstoned: 2)) == #"{"tombstoned":2}"#)
        #expect(json(AdminReply.Cancelled(cancelled: 7, wasSent: true)) == #"{"cancelled":7,"wasSent":true}"#)
        #expect(json(AdminReply.Requested()) == #"{"requested":true}"#)
        #expect(json(AdminReply.Wrist(foreground: false)) == #"{"foreground":false}"#)
        #expect(json(AdminReply.FileQueued(sequence: 3, bytes: 10)) == #"{"bytes":10,"sequence":3}"#)
        #expect(json(AdminReply.FileCancelled(cancelled: 3)) == #"{"cancelled":3}"#)
        #expect(
            json(AdminReply.ComplicationPushed(sentAs: "userInfo", sequence: 4, remaining: 0))
                == #"{"remaining":0,"sentAs":"userInfo","sequence":4}"#)
        #expect(
            json(AdminReply.DataSent(outcome: "replied", bytes: 1, reply: "00", roundTripMilliseconds: 1.5))
                == #"{"bytes":1,"outcome":"replied","reply":"00","roundTripMilliseconds":1.5}"#)
    }

    @Test("exercise and set positions are checked against the run, from 1, even a run without exercises")
    func positions() throws {
        let stamp = Stamp(time: Timestamp(secondsSinceEpoch: 0), origin: .phone)
        let id = DocumentID(bytes: Array(repeating: 1, count: 16))
        let log = ExerciseLog(
            id: id, exerciseName: "Squat", equipment: "", targetReps: 5, targetWeight: 100, setCount: 2, stamp: stamp)
        var run = WorkoutDocument(
            id: id, splitID: id, splitName: "Legs", startedAt: stamp.time, logs: [log], stamp: stamp)
        #expect(try run.setPosition(exercise: 1, set: 2) == (0, 1))
        #expect(throws: UsageError("exercise 1 has 2 sets; no set 3")) { try run.setPosition(exercise: 1, set: 3) }
        #expect(throws: UsageError("run \(id) has 1 exercises; no exercise 0")) { try run.logIndex(exercise: 0) }
        run.logs = []
        #expect(throws: UsageError("run \(id) has 0 exercises; no exercise 1")) { try run.logIndex(exercise: 1) }
    }
}
