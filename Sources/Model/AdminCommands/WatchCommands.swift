import ArgumentParsing
import WorkoutModel

/// watchctl's grammar: every verb, its arguments and options. Parsing is pure; a parse becomes a
/// `WatchCommand` (below, next to the grammar so a new verb is one edit here). docs/CLI.md describes each verb.
package enum WatchCommands {
    private static let json = SharedCommands.json
    private static let run = SharedCommands.run
    private static let exercise = SharedCommands.exercise
    private static let set = SharedCommands.set

    /// The whole tree, rooted at `watchctl`.
    package static let spec = CommandSpec(
        name: "watchctl", abstract: "Operate watchd, the watch daemon (the Apple Watch side of the sync).",
        discussion: """
            Talks to watchd over its admin socket. Edits apply to the watch's cache first, then go to
            the phone (message when reachable, queued transfer otherwise). Exit codes: 0 ok, 64 usage
            error, 69 watchd not running, 1 refused by watchd (unknown run, editing on phone, invalid).
            """,
        subcommands: [
            CommandSpec(name: "status", abstract: "Link, context, cache, outbox and session state.", flags: [json]),
            CommandSpec(name: "workouts", abstract: "List the runs in the watch's cache.", flags: [json]),
            CommandSpec(name: "splits", abstract: "List the splits in the watch's cache.", flags: [json]),
            CommandSpec(
                name: "show", abstract: "Show one cached split or run.",
                arguments: [ArgumentSpec("id", help: "A split or run ID.")], flags: [json]),
            CommandSpec(name: "settings", abstract: "Show the settings the phone pushed.", flags: [json]),
            CommandSpec(
                name: "complete", abstract: "Complete a set (reps and weight default to the targets).",
                arguments: [run, exercise, set],
                options: SharedCommands.setValues),
            CommandSpec(name: "undo", abstract: "Undo a completed set.", arguments: [run, exercise, set]),
            CommandSpec(name: "skip", abstract: "Skip an exercise.", arguments: [run, exercise]),
            CommandSpec(
                name: "reopen", abstract: "Reopen a completed or skipped exercise.", arguments: [run, exercise]),
            CommandSpec(name: "finish", abstract: "Finish the run, keeping progress.", arguments: [run]),
            CommandSpec(name: "pause", abstract: "Pause a run.", arguments: [run]),
            CommandSpec(name: "resume", abstract: "Resume a paused run.", arguments: [run]),
            CommandSpec(
                name: "session", abstract: "The workout session (HKWorkoutSession analog).",
                subcommands: [
                    CommandSpec(name: "show", abstract: "The session's state and what ended it.", flags: [json]),
                    CommandSpec(name: "start", abstract: "Start the session for a run (idempotent).", arguments: [run]),
                    CommandSpec(
                        name: "end", abstract: "End the session as the system would (a failure).",
                        options: [
                            OptionSpec(
                                "failure", help: "What failed.", valueName: "reason", isRequired: true)
                        ]),
                    CommandSpec(name: "clear", abstract: "Return an ended session to idle."),
                ]),
            CommandSpec(
                name: "queue", abstract: "Outstanding queued transfers (transferUserInfo).",
                subcommands: [
                    CommandSpec(name: "list", abstract: "List outstanding transfers with age and size.", flags: [json]),
                    CommandSpec(
                        name: "cancel", abstract: "Cancel a transfer the phone has not acknowledged, sent or not.",
                        discussion: """
                            Any transfer still in the outbox can be cancelled: it leaves the outbox, is never
                            sent again, and its edit gives way to the phone's copy of the run. One already
                            sent (or recovered after a restart) may have reached the phone: then the phone
                            keeps it. The reply says whether it had been sent; an unknown sequence exits 1.
                            """,
                        arguments: [ArgumentSpec("sequence", help: "The transfer's sequence number.")]),
                ]),
            SharedCommands.live,
            DataCommand.spec,
            FileCommand.spec,
            TraceQuery.spec,
            TraceQuery.metricsSpec,
            CommandSpec(
                name: "export", abstract: "Send the run's session samples to the phone as a file (transferFile).",
                arguments: [run]),
            CommandSpec(name: "sync", abstract: "Ask the phone for a fresh push (requestSync, best effort)."),
            CommandSpec(
                name: "wait", abstract: "Wait until every edit made here is back in a context from the phone.",
                options: [
                    OptionSpec(
                        "timeout", help: "Give up after this many seconds (0 to 25, default 10).",
                        valueName: "seconds")
                ]),
            CommandSpec(
                name: "wrist", abstract: "Move the watch app to the background (down) or foreground (up).",
                arguments: [ArgumentSpec("position", help: "down or up.")]),
            CommandSpec(
                name: "complication", abstract: "The app's complication on the watch face (isComplicationEnabled).",
                subcommands: [
                    CommandSpec(name: "disable", abstract: "Take it off the face: the phone's budget reads 0."),
                    CommandSpec(name: "enable", abstract: "Put it back on the face."),
                ]),
            CommandSpec(name: "unpair", abstract: "Unpair the watch: the phone's sends fail with deviceNotPaired."),
            CommandSpec(name: "pair", abstract: "Pair the watch again."),
            CommandSpec(
                name: "app", abstract: "The watch app: whether it runs, and its installation (isWatchAppInstalled).",
                subcommands: AppLifecycle.specs(
                    waitsFor: "phone",
                    launchedBy: "The phone cannot reach it (notReachable); its launch request (phonectl start, "
                        + "launch) launches it, as startWatchApp does.")
                    + [
                        CommandSpec(
                            name: "uninstall",
                            abstract: "Remove the app: the phone's sends fail with watchAppNotInstalled."
                        ),
                        CommandSpec(name: "install", abstract: "Install the app again."),
                    ]),
        ]
    ).addingToEveryLeaf(SharedCommands.json)  // a write verb's JSON: {"ok":true}, or what it reports
        .adding(options: SharedCommands.socketOptions(daemon: "watchd", environment: "WATCHD_ADMIN_SOCKET"))
}

/// What watchctl asks watchd to do: one case per leaf of `WatchCommands.spec` (a test checks every
/// leaf maps to a case). watchd switches over it exhaustively.
package enum WatchCommand: AdminCommand {
    package static let daemon = "watchd"

    case status
    case workouts
    case splits
    case show(id: DocumentID)
    case settings
    /// complete, undo, skip, reopen.
    case set(SetCommand)
    case finish(run: DocumentID)
    case pause(run: DocumentID)
    case resume(run: DocumentID)
    case showSession
    case startSession(run: DocumentID)
    case endSession(failure: String)
    case clearSession
    case listQueue
    case cancelTransfer(sequence: UInt64)
    case live(LiveCommand)
    /// Raw data messages: `data send`, `data received`.
    case data(DataCommand)
    /// Files: `file send`, `file list`, `file cancel`, `file received`.
    case file(FileCommand)
    case trace(TraceQuery)
    case metrics
    case sync
    /// `wait`: answered once no edit made on the watch waits for a context carrying it (status'
    /// `undeliveredEdits` is 0 and the cache holds it on disk), refused after `milliseconds`.
    case waitSynced(milliseconds: Int)
    /// Send the run's heart-rate samples to the phone as a file.
    case export(run: DocumentID)
    /// `up`: the app comes to the foreground.
    case wrist(up: Bool)
    /// `pair` (true) and `unpair` (false).
    case pair(Bool)
    /// `app install` (true) and `app uninstall` (false).
    case installApp(Bool)
    /// `app launch|terminate|background|foreground`.
    case app(AppLifecycle)
    /// `complication enable` (true) and `complication disable` (false).
    case enableComplication(Bool)

    /// The wire names of the cases, spelt out so an unknown verb is answered with the list
    /// (`verbs`); a case missing here cannot be encoded, which the mapping tests catch.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case status, workouts, splits, show, settings, set, finish, pause, resume, showSession, startSession
        case endSession, clearSession, listQueue, cancelTransfer, live, data, file, trace, metrics, sync
        case waitSynced, export, wrist, pair, installApp, app, enableComplication
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
        case ["workouts"]: self = .workouts
        case ["splits"]: self = .splits
        case ["show"]: self = .show(id: try command.documentID("id"))
        case ["settings"]: self = .settings
        case ["finish"]: self = .finish(run: try command.documentID("run"))
        case ["pause"]: self = .pause(run: try command.documentID("run"))
        case ["resume"]: self = .resume(run: try command.documentID("run"))
        case ["session", "show"]: self = .showSession
        case ["session", "start"]: self = .startSession(run: try command.documentID("run"))
        case ["session", "end"]: self = .endSession(failure: try command.string("failure"))
        case ["session", "clear"]: self = .clearSession
        case ["queue", "list"]: self = .listQueue
        case ["queue", "cancel"]:
            let text = try command.string("sequence")
            guard let sequence = UInt64(text) else { throw UsageError("sequence must be a number, got \(text)") }
            self = .cancelTransfer(sequence: sequence)
        case ["sync"]: self = .sync
        case ["wait"]:
            let text = command.optionalString("timeout") ?? "10"
            let longest = Double(Self.longestWaitMilliseconds) / 1000
            guard let seconds = Double(text), (0...longest).contains(seconds) else {
                throw UsageError("--timeout must be a number of seconds from 0 to \(Int(longest)), got \(text)")
            }
            self = .waitSynced(milliseconds: Int((seconds * 1000).rounded()))
        case ["export"]: self = .export(run: try command.documentID("run"))
        case ["trace"]: self = .trace(try TraceQuery(command))
        case ["metrics"]: self = .metrics
        case ["wrist"]:
            let position = try command.string("position")
            guard position == "down" || position == "up" else {
                throw UsageError("wrist position must be down or up, got \(position)")
            }
            self = .wrist(up: position == "up")
        case ["pair"]: self = .pair(true)
        case ["unpair"]: self = .pair(false)
        case ["app", "install"]: self = .installApp(true)
        case ["app", "uninstall"]: self = .installApp(false)
        case ["app", "launch"]: self = .app(.launch)
        case ["app", "terminate"]: self = .app(.terminate)
        case ["app", "foreground"]: self = .app(.foreground)
        case ["app", "background"]: self = .app(.background)
        case ["complication", "enable"]: self = .enableComplication(true)
        case ["complication", "disable"]: self = .enableComplication(false)
        case ["complete"], ["undo"], ["skip"], ["reopen"]: self = .set(try SetCommand(command))
        case let path where path.first == "live": self = .live(try LiveCommand(command))
        case let path where path.first == "data": self = .data(try DataCommand(command))
        case let path where path.first == "file": self = .file(try FileCommand(command))
        default: throw UsageError.unknownCommand(command.path)
        }
        try validate()
    }

    /// The longest `wait`: within the CLI's 30 s wait for an answer, with room for a busy daemon.
    package static let longestWaitMilliseconds = 25_000

    package func validate() throws(UsageError) {
        switch self {
        case .set(let command): try command.validate()
        case .live(let command): try command.validate()
        case .trace(let query): try query.validate()
        case .data(let data): try data.validate()
        case .file(let file): try file.validate()
        case .waitSynced(let milliseconds):
            guard (0...Self.longestWaitMilliseconds).contains(milliseconds) else {
                throw UsageError("--timeout must be from 0 to \(Self.longestWaitMilliseconds / 1000) seconds")
            }
        case .endSession(let failure):
            // The reason is what the watch shows and logs for the failed session.
            if let problem = SplitDocument.nameProblem(failure) { throw UsageError("--failure \(problem)") }
        default: break
        }
    }
}

extension WatchCommand {
    /// Whether the command only reads (see `PhoneCommand.isQuery`).
    package var isQuery: Bool {
        switch self {
        case .status, .workouts, .splits, .show, .settings, .showSession, .listQueue, .trace, .metrics: true
        default: false
        }
    }

    /// Whether the command is the app's own, refused while it is not running: the device's (status,
    /// reads of the cache, the queue, the journal, pairing, installing, launching) are not.
    package var needsRunningApp: Bool {
        switch self {
        case .set, .finish, .pause, .resume, .startSession, .endSession, .clearSession, .live, .export, .sync,
            .waitSynced, .wrist, .app(.foreground), .app(.background):
            true
        case .data(.send), .file(.send), .file(.cancel): true
        default: false
        }
    }

    /// Whether the command writes the daemon's files (see `PhoneCommand.writes`); waiting for the
    /// edits to reach the phone writes nothing either.
    package var writes: Bool {
        switch self {
        case .data, .file(.list), .file(.received), .waitSynced: false
        default: !isQuery
        }
    }
}
