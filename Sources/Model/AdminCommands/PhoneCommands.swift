import ArgumentParsing
import Trace
import WorkoutModel

/// phonectl's grammar: every verb, its arguments and options. Parsing is pure; a parse becomes a
/// `PhoneCommand` (below, next to the grammar so a new verb is one edit here). docs/CLI.md describes each verb.
package enum PhoneCommands {
    private static let json = SharedCommands.json
    private static let run = SharedCommands.run
    private static let exercise = SharedCommands.exercise
    private static let set = SharedCommands.set
    private static func exerciseOption(isRequired: Bool) -> OptionSpec {
        OptionSpec(
            "exercise", shortName: "e", help: "An exercise as NAME:SETSxREPS@WEIGHT[:EQUIPMENT]; repeat for each.",
            valueName: "spec", isRequired: isRequired)
    }

    /// The whole tree, rooted at `phonectl`.
    package static let spec = CommandSpec(
        name: "phonectl", abstract: "Operate phoned, the phone daemon (the iPhone side of the sync).",
        discussion: """
            Talks to phoned over its admin socket. Exit codes: 0 ok, 64 usage error, 69 phoned not
            running, 1 refused by phoned (unknown ID, deleted, locked, invalid value).
            """,
        subcommands: [
            CommandSpec(name: "status", abstract: "Link, push and document counts.", flags: [json]),
            CommandSpec(name: "splits", abstract: "List every split.", flags: [json]),
            CommandSpec(
                name: "workouts", abstract: "List active and recent runs (--all: every run in history).",
                discussion: """
                    Ordered by start. The whole history streams: lines are printed as phoned reads the
                    runs, a few hundred at a time, so the first arrives at once and neither side holds
                    the whole list.
                    """,
                options: [
                    OptionSpec("limit", help: "List at most this many runs (a page).", valueName: "count"),
                    OptionSpec(
                        "after", help: "Start after this run ID (the last one of the previous page).", valueName: "id"),
                    OptionSpec(
                        "since",
                        help:
                            "Only runs started at or after this: an age (90s, 5m, 2h, 1d) or a UTC time (2026-12-01T01:02:03Z).",
                        valueName: "when"),
                ],
                flags: [FlagSpec("all", help: "Include the whole history."), json]),
            CommandSpec(
                name: "show", abstract: "Show one split or run.",
                arguments: [ArgumentSpec("id", help: "A split or run ID.")], flags: [json]),
            CommandSpec(
                name: "split", abstract: "Create, edit or delete a split.",
                subcommands: [
                    CommandSpec(
                        name: "create", abstract: "Create a split; prints its ID.",
                        options: [
                            OptionSpec("name", shortName: "n", help: "The split's name.", isRequired: true),
                            exerciseOption(isRequired: true),
                        ]),
                    CommandSpec(
                        name: "edit", abstract: "Rename a split or replace its exercises (runs keep their snapshot).",
                        arguments: [ArgumentSpec("id", help: "The split's ID.")],
                        options: [
                            OptionSpec("name", shortName: "n", help: "A new name."), exerciseOption(isRequired: false),
                        ]),
                    CommandSpec(
                        name: "delete", abstract: "Delete a split (tombstoned forever).",
                        arguments: [ArgumentSpec("id", help: "The split's ID.")]),
                ]),
            CommandSpec(
                name: "start", abstract: "Start a run of a split (a snapshot) and launch the watch app; prints its ID.",
                arguments: [ArgumentSpec("split", help: "The split's ID.")],
                flags: [FlagSpec("end-others", help: "First end every other active run, keeping its progress.")]),
            CommandSpec(
                name: "complete", abstract: "Complete a set (reps and weight default to the targets).",
                arguments: [run, exercise, set],
                options: SharedCommands.setValues),
            CommandSpec(name: "undo", abstract: "Undo a completed set.", arguments: [run, exercise, set]),
            CommandSpec(name: "skip", abstract: "Skip an exercise.", arguments: [run, exercise]),
            CommandSpec(
                name: "reopen", abstract: "Reopen a completed or skipped exercise.", arguments: [run, exercise]),
            CommandSpec(name: "pause", abstract: "Pause a run (paused time is not active time).", arguments: [run]),
            CommandSpec(name: "resume", abstract: "Resume a paused run.", arguments: [run]),
            CommandSpec(
                name: "end", abstract: "Save Workout: skip what is unfinished and complete the run.", arguments: [run]),
            CommandSpec(
                name: "discard", abstract: "Discard a run: tombstone written, live file removed.", arguments: [run]),
            CommandSpec(name: "clear-history", abstract: "Tombstone every completed run the phone has now."),
            CommandSpec(
                name: "settings", abstract: "Show or change the settings pushed to the watch.",
                subcommands: [
                    CommandSpec(name: "show", abstract: "Show the settings.", flags: [json]),
                    CommandSpec(
                        name: "set", abstract: "Change settings.",
                        options: [
                            OptionSpec("rest", help: "Rest after each set, in seconds.", valueName: "seconds"),
                            OptionSpec(
                                "countdown", help: "Ready countdown before each set, in seconds.", valueName: "seconds"),
                            OptionSpec("unit", help: "Weight unit: kg or lb.", valueName: "unit"),
                        ]),
                ]),
            CommandSpec(
                name: "lock", abstract: "Open an editor on the phone: the watch parks the run (or the split's runs).",
                subcommands: [
                    CommandSpec(
                        name: "workout", abstract: "Lock a run.", arguments: [ArgumentSpec("id", help: "The run's ID.")]
                    ),
                    CommandSpec(
                        name: "split", abstract: "Lock a split (parks its runs).",
                        arguments: [ArgumentSpec("id", help: "The split's ID.")]),
                ]),
            CommandSpec(
                name: "unlock", abstract: "Close the editor: clear a lock.",
                subcommands: [
                    CommandSpec(name: "workout", abstract: "Clear the run lock."),
                    CommandSpec(name: "split", abstract: "Clear the split lock."),
                ]),
            SharedCommands.live,
            DataCommand.spec,
            FileCommand.spec,
            CommandSpec(
                name: "complication", abstract: "The watch complication (transferCurrentComplicationUserInfo).",
                subcommands: [
                    CommandSpec(
                        name: "push",
                        abstract:
                            "Send what the complication shows, ahead of ordinary transfers while the day's budget lasts.",
                        arguments: [ArgumentSpec("text", help: "What the complication shows (at most 1,024 bytes).")]),
                    CommandSpec(
                        name: "show", abstract: "Today's remaining budget and the outstanding transfers to the watch.",
                        flags: [json]),
                    CommandSpec(
                        name: "cancel", abstract: "Cancel an outstanding complication transfer, sent or not.",
                        discussion: """
                            SEQUENCE as complication show lists it: a complication transfer, or with --userinfo
                            one that went as ordinary userInfo (past the day's budget). It leaves its outbox and
                            is never sent again; one already sent may have reached the watch, which then keeps
                            it. The reply says whether it had been sent; one not outstanding exits 1.
                            """,
                        arguments: [ArgumentSpec("sequence", help: "The transfer's sequence number.")],
                        flags: [FlagSpec("userinfo", help: "The sequence is an ordinary userInfo transfer's.")]),
                ]),
            TraceQuery.spec,
            TraceQuery.metricsSpec,
            CommandSpec(name: "push", abstract: "Send the full state to the watch now, even if unchanged."),
            CommandSpec(
                name: "launch", abstract: "Ask the watch app to launch for a run (best effort).", arguments: [run]),
            CommandSpec(
                name: "app", abstract: "The phone app: whether it runs (phoned, the device, runs on).",
                subcommands: AppLifecycle.specs(
                    waitsFor: "watch",
                    launchedBy: "A message from the watch launches it in the background, as iOS does.")),
        ]
    ).addingToEveryLeaf(json)  // a write verb's JSON: the created ID, or {"ok":true}
        .adding(options: SharedCommands.socketOptions(daemon: "phoned", environment: "PHONED_ADMIN_SOCKET"))
}

/// What phonectl asks phoned to do: one case per leaf of `PhoneCommands.spec` (a test checks every
/// leaf maps to a case). phoned switches over it exhaustively; values are typed here, so the
/// daemon only checks what needs its state (a run's exercise count, a known ID).
package enum PhoneCommand: AdminCommand {
    package static let daemon = "phoned"

    case status
    case splits
    /// `json`: only the form the CLI prints is built (a long history is costly to encode twice).
    /// `since`: as typed (an age is relative to phoned's clock when it answers). `streamed`: the
    /// client takes a reply in chunks (docs/PROTOCOL.md, "Admin socket"); nil from a client that
    /// predates them, which is answered whole.
    case workouts(all: Bool, limit: Int?, after: DocumentID?, since: String?, json: Bool, streamed: Bool?)
    case show(id: DocumentID)
    case createSplit(name: String, exercises: [ExerciseTemplate])
    /// nil fields stay as they are.
    case editSplit(id: DocumentID, name: String?, exercises: [ExerciseTemplate]?)
    case deleteSplit(id: DocumentID)
    case start(split: DocumentID, endingOthers: Bool)
    /// complete, undo, skip, reopen.
    case set(SetCommand)
    case pause(run: DocumentID)
    case resume(run: DocumentID)
    case end(run: DocumentID)
    case discard(run: DocumentID)
    case clearHistory
    case showSettings
    /// nil fields stay as they are.
    case setSettings(rest: Int?, countdown: Int?, unit: WeightUnit?)
    case lockWorkout(id: DocumentID)
    case lockSplit(id: DocumentID)
    case unlockWorkout
    case unlockSplit
    case live(LiveCommand)
    /// Raw data messages: `data send`, `data received`.
    case data(DataCommand)
    /// Files: `file send`, `file list`, `file cancel`, `file received`.
    case file(FileCommand)
    case pushComplication(text: String)
    case showComplication
    /// `complication cancel SEQUENCE [--userinfo]`.
    case cancelComplication(sequence: UInt64, userInfo: Bool)
    case trace(TraceQuery)
    case metrics
    case push
    case launch(run: DocumentID)
    /// `app launch|terminate|background|foreground`.
    case app(AppLifecycle)

    /// The wire names of the cases, spelt out so an unknown verb is answered with the list
    /// (`verbs`); a case missing here cannot be encoded, which the mapping tests catch.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case status, splits, workouts, show, createSplit, editSplit, deleteSplit, start, set, pause, resume, end
        case discard, clearHistory, showSettings, setSettings, lockWorkout, lockSplit, unlockWorkout, unlockSplit
        case live, data, file, pushComplication, showComplication, cancelComplication, trace, metrics, push, launch, app
    }

    package static var verbs: [String: [String]] {
        [
            "": CodingKeys.allCases.map(\.rawValue), "set._0": SetCommand.verbs, "live._0": LiveCommand.verbs,
            "data._0": DataCommand.verbs, "file._0": FileCommand.verbs,
        ]
    }

    package init(_ command: ParsedCommand) throws(UsageError) {
        switch command.path {
        case ["status"]: self = .status
        case ["trace"]: self = .trace(try TraceQuery(command))
        case ["metrics"]: self = .metrics
        case ["splits"]: self = .splits
        case ["workouts"]:
            self = .workouts(
                all: command.flag("all"), limit: try command.optionalInteger("limit"),
                after: try command.optionalDocumentID("after"), since: command.optionalString("since"),
                json: command.flag("json"), streamed: true)
        case ["show"]: self = .show(id: try command.documentID("id"))
        case ["split", "create"]:
            self = .createSplit(name: try command.string("name"), exercises: try Self.exercises(command))
        case ["split", "edit"]:
            let exercises = try Self.exercises(command)
            self = .editSplit(
                id: try command.documentID("id"), name: command.optionalString("name"),
                exercises: exercises.isEmpty ? nil : exercises)
        case ["split", "delete"]: self = .deleteSplit(id: try command.documentID("id"))
        case ["start"]: self = .start(split: try command.documentID("split"), endingOthers: command.flag("end-others"))
        case ["pause"]: self = .pause(run: try command.documentID("run"))
        case ["resume"]: self = .resume(run: try command.documentID("run"))
        case ["end"]: self = .end(run: try command.documentID("run"))
        case ["discard"]: self = .discard(run: try command.documentID("run"))
        case ["clear-history"]: self = .clearHistory
        case ["settings", "show"]: self = .showSettings
        case ["settings", "set"]:
            let unit = try command.optionalString("unit").map { (text: String) throws(UsageError) -> WeightUnit in
                guard let unit = WeightUnit(rawValue: text) else {
                    throw UsageError("--unit must be kg or lb, got \(text)")
                }
                return unit
            }
            self = .setSettings(
                rest: try command.optionalInteger("rest"), countdown: try command.optionalInteger("countdown"),
                unit: unit)
        case ["lock", "workout"]: self = .lockWorkout(id: try command.documentID("id"))
        case ["lock", "split"]: self = .lockSplit(id: try command.documentID("id"))
        case ["unlock", "workout"]: self = .unlockWorkout
        case ["unlock", "split"]: self = .unlockSplit
        case ["push"]: self = .push
        case ["launch"]: self = .launch(run: try command.documentID("run"))
        case ["app", "launch"]: self = .app(.launch)
        case ["app", "terminate"]: self = .app(.terminate)
        case ["app", "background"]: self = .app(.background)
        case ["app", "foreground"]: self = .app(.foreground)
        case ["complete"], ["undo"], ["skip"], ["reopen"]: self = .set(try SetCommand(command))
        case let path where path.first == "live": self = .live(try LiveCommand(command))
        case let path where path.first == "data": self = .data(try DataCommand(command))
        case let path where path.first == "file": self = .file(try FileCommand(command))
        case ["complication", "push"]: self = .pushComplication(text: try command.string("text"))
        case ["complication", "show"]: self = .showComplication
        case ["complication", "cancel"]:
            let text = try command.string("sequence")
            guard let sequence = UInt64(text) else { throw UsageError("sequence must be a number, got \(text)") }
            self = .cancelComplication(sequence: sequence, userInfo: command.flag("userinfo"))
        default: throw UsageError.unknownCommand(command.path)
        }
        try validate()
    }

    package func validate() throws(UsageError) {
        switch self {
        case .workouts(_, let limit, _, let since, _, _):
            if let limit, limit < 1 { throw UsageError("--limit must be at least 1, got \(limit)") }
            try TraceQuery.checkBound("since", since)
        case .pushComplication(let text):
            guard text.utf8.count <= ComplicationPayload.maximumTextBytes else {
                throw UsageError("text of \(text.utf8.count) bytes is over \(ComplicationPayload.maximumTextBytes)")
            }
        case .createSplit(let name, let exercises):
            try Self.checkName(name, what: "--name")
            guard !exercises.isEmpty else { throw UsageError("a split needs at least one --exercise") }
            try Self.check(exercises)
            guard exercises.count <= SplitDocument.maximumExercises else {
                throw UsageError("\(exercises.count) exercises is over \(SplitDocument.maximumExercises)")
            }
        case .editSplit(_, let name, let exercises):
            if let name { try Self.checkName(name, what: "--name") }
            if let exercises {
                try Self.check(exercises)
                guard exercises.count <= SplitDocument.maximumExercises else {
                    throw UsageError("\(exercises.count) exercises is over \(SplitDocument.maximumExercises)")
                }
            }
        case .setSettings(let rest, let countdown, _):
            if let rest, !Settings.restRange.contains(rest) {
                throw UsageError("--rest must be 0 to 3600 seconds, got \(rest)")
            }
            if let countdown, !Settings.countdownRange.contains(countdown) {
                throw UsageError("--countdown must be 0 to 600 seconds, got \(countdown)")
            }
        case .set(let command): try command.validate()
        case .live(let command): try command.validate()
        case .trace(let query): try query.validate()
        case .data(let data): try data.validate()
        case .file(let file): try file.validate()
        default: break
        }
    }

    /// The longest split or exercise name, in UTF-8 bytes: a label on a watch face, not a document.
    package static let maximumNameBytes = SplitDocument.maximumNameBytes

    /// A name is shown on both screens: `SplitDocument.nameProblem`'s rules.
    private static func checkName(_ name: String, what: String, blankAllowed: Bool = false) throws(UsageError) {
        if let problem = SplitDocument.nameProblem(name, blankAllowed: blankAllowed) {
            throw UsageError("\(what) \(problem)")
        }
    }

    /// Each exercise has a name and targets a split document accepts (1...100 sets, reps not
    /// negative) with a weight an edit may enter (`SetRecord.isValid`), so the daemon never writes a
    /// split its own reader would skip or a target no set could be completed with.
    private static func check(_ exercises: [ExerciseTemplate]) throws(UsageError) {
        for exercise in exercises {
            try checkName(exercise.name, what: "an exercise's name")
            try checkName(exercise.equipment, what: "equipment", blankAllowed: true)
            guard (1...100).contains(exercise.targetSets) else {
                throw UsageError("\(exercise.name): sets must be 1...100, got \(exercise.targetSets)")
            }
            guard exercise.targetReps >= 0 else {
                throw UsageError("\(exercise.name): reps must not be negative, got \(exercise.targetReps)")
            }
            guard SetRecord.isValid(weight: exercise.targetWeight) else {
                throw UsageError("\(exercise.name): weight \(SetRecord.weightRule)")
            }
        }
    }

    /// Every `--exercise NAME:SETSxREPS@WEIGHT[:EQUIPMENT]`, e.g. `Squat:3x5@100:barbell`. A name or
    /// the equipment may hold colons: the first part after the name that reads as SETSxREPS@WEIGHT
    /// divides them.
    private static func exercises(_ command: ParsedCommand) throws(UsageError) -> [ExerciseTemplate] {
        var templates: [ExerciseTemplate] = []
        for text in command.strings("exercise") {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard let index = parts.indices.dropFirst().first(where: { shape(parts[$0]) != nil }),
                let (sets, reps, weight) = shape(parts[index])
            else {
                throw UsageError(
                    "--exercise must look like NAME:SETSxREPS@WEIGHT[:EQUIPMENT], got \(text.debugDescription)")
            }
            templates.append(
                ExerciseTemplate(
                    name: parts[..<index].joined(separator: ":"),
                    equipment: parts[(index + 1)...].joined(separator: ":"), targetSets: sets, targetReps: reps,
                    targetWeight: weight))
        }
        return templates
    }

    /// `SETSxREPS@WEIGHT`, e.g. `3x5@100`, or nil.
    private static func shape(_ text: String) -> (sets: Int, reps: Int, weight: Double)? {
        let shape = text.split(separator: "@", omittingEmptySubsequences: false)
        let counts = shape.first?.split(separator: "x", omittingEmptySubsequences: false) ?? []
        guard shape.count == 2, counts.count == 2, let sets = Int(counts[0]), let reps = Int(counts[1]),
            let weight = Double(shape[1])
        else { return nil }
        return (sets, reps, weight)
    }
}

extension UsageError {
    /// A path the grammar accepts but no command case maps (a test keeps this from happening).
    static func unknownCommand(_ path: [String]) -> UsageError {
        UsageError("no command for '\(path.joined(separator: " "))'")
    }
}

extension PhoneCommand {
    /// Whether the command only reads: its reply may show edits whose writes have not landed yet (it
    /// acknowledges none). Any other command's reply waits for every write sent before it.
    package var isQuery: Bool {
        switch self {
        case .status, .splits, .workouts, .show, .showSettings, .showComplication, .trace, .metrics: true
        default: false
        }
    }

    /// Whether the command writes the daemon's files (refused while one is on a read-only file
    /// system): any but a query, a data message (never written) and the file queries.
    /// Whether the command is the app's own, refused while it is not running: reads of the
    /// documents, the journal, what the device received, and the app's launch are not.
    package var needsRunningApp: Bool {
        switch self {
        case .app(.launch), .app(.terminate), .data(.received), .file(.list), .file(.received): false
        default: !isQuery
        }
    }

    package var writes: Bool {
        switch self {
        case .data, .file(.list), .file(.received): false
        default: !isQuery
        }
    }
}
