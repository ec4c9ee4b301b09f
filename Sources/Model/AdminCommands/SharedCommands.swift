import ArgumentParsing

/// What phonectl and watchctl share: the run/exercise/set arguments, the set-completion options,
/// the admin socket options and the `live` verbs (identical on both CLIs).
package enum SharedCommands {
    static let json = FlagSpec.json
    static let run = ArgumentSpec("run", help: "The run's ID (a UUID).")
    static let exercise = ArgumentSpec("exercise", help: "The exercise's position in the run, from 1.")
    static let set = ArgumentSpec("set", help: "The set's position in the exercise, from 1.")
    /// `--reps` and `--weight` of a set completion (default: the targets).
    static let setValues = [
        OptionSpec("reps", shortName: "r", help: "Reps done.", valueName: "count"),
        OptionSpec("weight", shortName: "w", help: "Weight lifted.", valueName: "weight"),
    ]

    /// `--socket` and `--config` on a CLI's root, naming `daemon`'s admin socket.
    static func socketOptions(daemon: String, environment: String) -> [OptionSpec] {
        [
            OptionSpec(
                "socket",
                help: "\(daemon)'s admin socket (default: $\(environment), else run/\(daemon).sock here or above, "
                    + "else /run/watchsync/\(daemon).sock).",
                valueName: "path"),
            OptionSpec("config", help: "Read the admin socket path from \(daemon)'s config file.", valueName: "file"),
        ]
    }

    /// The `live` group: open, advance, close, dismiss, show.
    static let live = CommandSpec(
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
                    OptionSpec(
                        "weight", shortName: "w", help: "Weight lifted (completing a set).", valueName: "weight"),
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
        ])
}
