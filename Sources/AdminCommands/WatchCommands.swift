import ArgumentParsing

/// watchctl's grammar: every verb, its arguments and options. Parsing is pure; watchd re-validates
/// values when it executes the command. docs/CLI.md describes each verb.
package enum WatchCommands {
    private static let json = FlagSpec.json
    private static let run = ArgumentSpec("run", help: "The run's ID (a UUID).")
    private static let exercise = ArgumentSpec("exercise", help: "The exercise's position in the run, from 1.")
    private static let set = ArgumentSpec("set", help: "The set's position in the exercise, from 1.")

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
                options: [
                    OptionSpec("reps", shortName: "r", help: "Reps done.", valueName: "count"),
                    OptionSpec("weight", shortName: "w", help: "Weight lifted.", valueName: "weight"),
                ]),
            CommandSpec(name: "undo", abstract: "Undo a completed set.", arguments: [run, exercise, set]),
            CommandSpec(name: "skip", abstract: "Skip an exercise.", arguments: [run, exercise]),
            CommandSpec(name: "reopen", abstract: "Reopen a completed or skipped exercise.", arguments: [run, exercise]),
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
                        name: "cancel", abstract: "Cancel a transfer that has not been sent yet.",
                        arguments: [ArgumentSpec("sequence", help: "The transfer's sequence number.")]),
                ]),
            CommandSpec(
                name: "live", abstract: "The live-run mirror: drive a run's exercise flow, or follow the peer's.",
                subcommands: [
                    CommandSpec(
                        name: "open", abstract: "Open a run's exercise flow here (this side drives it).",
                        arguments: [ArgumentSpec("run", help: "The run's ID.")],
                        options: [
                            OptionSpec(
                                "exercise", shortName: "e",
                                help: "The exercise's position, from 1 (default: the first unfinished).",
                                valueName: "n")
                        ]),
                    CommandSpec(
                        name: "advance",
                        abstract: "The next human action: skip the countdown, complete the set, or skip the rest.",
                        arguments: [ArgumentSpec("run", help: "The run's ID.")],
                        options: [
                            OptionSpec("reps", shortName: "r", help: "Reps done (completing a set).", valueName: "count"),
                            OptionSpec("weight", shortName: "w", help: "Weight lifted (completing a set).", valueName: "weight"),
                        ]),
                    CommandSpec(
                        name: "close", abstract: "Leave the flow (sends liveEnded).",
                        arguments: [ArgumentSpec("run", help: "The run's ID.")]),
                    CommandSpec(
                        name: "dismiss", abstract: "Dismiss the follower cover for a run.",
                        arguments: [ArgumentSpec("run", help: "The run's ID.")]),
                    CommandSpec(
                        name: "show", abstract: "What the screen shows now: phase, set k of n, seconds left.",
                        flags: [json]),
                ]),
            CommandSpec(name: "sync", abstract: "Ask the phone for a fresh push (requestSync, best effort)."),
            CommandSpec(
                name: "wrist", abstract: "Move the watch app to the background (down) or foreground (up).",
                arguments: [ArgumentSpec("position", help: "down or up.")]),
        ]
    ).adding(options: [
        OptionSpec("socket", help: "watchd's admin socket (default: $WATCHD_ADMIN_SOCKET).", valueName: "path"),
        OptionSpec("config", help: "Read the admin socket path from watchd's config file.", valueName: "file"),
    ])
}
