import ArgumentParsing

/// A tool shaped like `phonectl`: a root with an inherited option, read verbs with `--json`, a
/// nested group, positionals of every kind.
let sampleTool = CommandSpec(
    name: "phonectl", abstract: "Administers phoned.",
    discussion: "Talks to phoned over its admin socket.",
    subcommands: [
        CommandSpec(name: "status", abstract: "Shows the link and sync state.", flags: [.json]),
        CommandSpec(
            name: "session", abstract: "Manages workout sessions.",
            subcommands: [
                CommandSpec(
                    name: "end", abstract: "Ends a workout session.",
                    arguments: [ArgumentSpec("session-id", help: "The session to end.")],
                    options: [OptionSpec("reason", shortName: "r", help: "Why it ended.", valueName: "text")],
                    flags: [.json, FlagSpec("force", shortName: "f", help: "End it even if the watch disagrees.")]),
                CommandSpec(name: "list", abstract: "Lists sessions.", flags: [.json]),
            ]),
        CommandSpec(
            name: "runs", abstract: "Lists recent runs.",
            arguments: [ArgumentSpec("kind", help: "Which runs.", isOptional: true)],
            options: [
                OptionSpec("limit", shortName: "n", help: "At most this many.", valueName: "count"),
                OptionSpec("pace", help: "Minimum pace.", valueName: "minutes-per-km"),
            ],
            flags: [.json]),
        CommandSpec(
            name: "tag", abstract: "Tags documents.",
            arguments: [
                ArgumentSpec("tag", help: "The tag."),
                ArgumentSpec("documents", help: "The documents to tag.", isRepeated: true),
            ]),
        CommandSpec(
            name: "export", abstract: "Exports documents.",
            options: [OptionSpec("to", help: "Destination directory.", valueName: "path", isRequired: true)]),
    ],
    options: [OptionSpec("socket", help: "The admin socket.", valueName: "path")])
