import ArgumentParsing

/// phonectl's grammar: every verb, its arguments and options. Parsing is pure; phoned re-validates
/// values (IDs, ranges) when it executes the command. docs/CLI.md describes each verb.
package enum PhoneCommands {
    private static let json = SharedCommands.json
    private static let run = SharedCommands.run
    private static let exercise = SharedCommands.exercise
    private static let set = SharedCommands.set
    private static let exerciseOption = OptionSpec(
        "exercise", shortName: "e", help: "An exercise as NAME:SETSxREPS@WEIGHT[:EQUIPMENT]; repeat for each.",
        valueName: "spec")

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
                options: [
                    OptionSpec("limit", help: "List at most this many runs (a page).", valueName: "count"),
                    OptionSpec(
                        "after", help: "Start after this run ID (the last one of the previous page).", valueName: "id"),
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
                            OptionSpec("name", shortName: "n", help: "The split's name.", isRequired: true), exerciseOption,
                        ]),
                    CommandSpec(
                        name: "edit", abstract: "Rename a split or replace its exercises (runs keep their snapshot).",
                        arguments: [ArgumentSpec("id", help: "The split's ID.")],
                        options: [OptionSpec("name", shortName: "n", help: "A new name."), exerciseOption]),
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
            CommandSpec(name: "reopen", abstract: "Reopen a completed or skipped exercise.", arguments: [run, exercise]),
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
                            OptionSpec("countdown", help: "Ready countdown before each set, in seconds.", valueName: "seconds"),
                            OptionSpec("unit", help: "Weight unit: kg or lb.", valueName: "unit"),
                        ]),
                ]),
            CommandSpec(
                name: "lock", abstract: "Open an editor on the phone: the watch parks the run (or the split's runs).",
                subcommands: [
                    CommandSpec(name: "workout", abstract: "Lock a run.", arguments: [ArgumentSpec("id", help: "The run's ID.")]),
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
            CommandSpec(name: "push", abstract: "Send the full state to the watch now, even if unchanged."),
            CommandSpec(name: "launch", abstract: "Ask the watch app to launch for a run (best effort).", arguments: [run]),
        ]
    ).adding(options: SharedCommands.socketOptions(daemon: "phoned", environment: "PHONED_ADMIN_SOCKET"))
}
