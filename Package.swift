// swift-tools-version: 6.0
import PackageDescription

/// One settings list for every target: Swift 6 language mode plus explicit `any`.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

/// Each target's folder is `Sources/<layer>/<name>` (its `path:`), one folder per layer: `Model` (pure:
/// the model, the engines, the nodes), `Runtime` (I/O: system calls, durable files, the link, the stores,
/// the daemons' shell, the admin client), `Apps` (the daemons and their CLIs) and `Tools` (what tests and
/// measures them: the simulator, the testers, the bench, the fuzz targets, the test support).
/// docs/ARCHITECTURE.md, "The source tree".
let package = Package(
    name: "WatchSync",
    platforms: [.macOS(.v15)],
    targets: [
        // Pure: documents, the workout-status rule, mutations, the state-push payload.
        .target(name: "WorkoutModel", path: "Sources/Model/WorkoutModel", swiftSettings: swiftSettings),
        // Pure: frame codec, handshake and per-channel state machines (sans-IO).
        .target(name: "LinkProtocol", path: "Sources/Model/LinkProtocol", swiftSettings: swiftSettings),
        // Pure: the event journal's record and encoding, window/run filters, and the merged sequence diagram.
        .target(name: "Trace", path: "Sources/Model/Trace", swiftSettings: swiftSettings),
        // System libcrypto (HMAC-SHA256, CSPRNG, constant-time compare); see README "System libraries".
        .systemLibrary(
            name: "COpenSSL", path: "Sources/Runtime/COpenSSL", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]),
        // I/O: the system-call layer, the only module importing Glibc — the event loop and its sockets,
        // files and fsync, directory listing, inotify, signals, threads, clocks, their errors, and the
        // admin CLIs' blocking Unix-socket client.
        .target(name: "POSIX", path: "Sources/Runtime/POSIX", swiftSettings: swiftSettings),
        // I/O: the durable files the stores and the link share — atomic replace, the two-half record file,
        // files pending their publish, the event journal — and the process's fsync latencies. No libcrypto.
        .target(
            name: "DurableFiles", dependencies: ["LinkProtocol", "POSIX", "Trace"],
            path: "Sources/Runtime/DurableFiles", swiftSettings: swiftSettings),
        // I/O: the link endpoint on POSIX's event loop, the durable outbox and slot files, pairing-key crypto.
        .target(
            name: "LinkRuntime",
            dependencies: ["LinkProtocol", "COpenSSL", "DurableFiles", "POSIX", "Trace"],
            path: "Sources/Runtime/LinkRuntime", swiftSettings: swiftSettings
        ),
        // Pure: the phone's SyncEngine decisions — ingest gates, operations, tombstones, the state push.
        .target(
            name: "SyncEngine", dependencies: ["WorkoutModel"], path: "Sources/Model/SyncEngine",
            swiftSettings: swiftSettings),
        // Pure: the watch's decisions — applying a pushed context to the cache, optimistic edits and
        // how they are forwarded, and the workout-session coordinator (the S4/S6/S7 fix).
        .target(
            name: "WatchEngine", dependencies: ["WorkoutModel"], path: "Sources/Model/WatchEngine",
            swiftSettings: swiftSettings),
        // I/O: the phone's iCloud-Drive-style document directory — atomic writes, the scan, inotify.
        .target(
            name: "PhoneStore",
            dependencies: ["WorkoutModel", "SyncEngine", "DurableFiles", "POSIX", "Nodes"],
            path: "Sources/Runtime/PhoneStore", swiftSettings: swiftSettings
        ),
        // Pure: the live-run mirror — run flow phases and timers, LiveProgress ordering, staging and retry.
        .target(
            name: "LiveMirror", dependencies: ["WorkoutModel"], path: "Sources/Model/LiveMirror",
            swiftSettings: swiftSettings),
        // I/O: the watch's plain-file cache (no database) and its session record.
        .target(
            name: "WatchStore", dependencies: ["WatchEngine", "DurableFiles", "POSIX"],
            path: "Sources/Runtime/WatchStore", swiftSettings: swiftSettings),
        // Pure: hand-written command-line parsing with help at every level (argv → command value).
        .target(name: "ArgumentParsing", path: "Sources/Model/ArgumentParsing", swiftSettings: swiftSettings),
        // Pure: the phonectl and watchctl command grammars (what each verb takes), shared by CLI and tests.
        .target(
            name: "AdminCommands", dependencies: ["ArgumentParsing", "WorkoutModel", "Trace"],
            path: "Sources/Model/AdminCommands", swiftSettings: swiftSettings),
        // Pure: each daemon's decisions as one node (events in, ordered actions out), the live-mirror
        // driver both share, and the admin replies and statuses they build.
        .target(
            name: "Nodes",
            dependencies: [
                "AdminCommands", "LinkProtocol", "LiveMirror", "SyncEngine", "Trace", "WatchEngine", "WorkoutModel",
            ],
            path: "Sources/Model/Nodes", swiftSettings: swiftSettings),
        // Pure: both nodes and link engines under one seed, with a simulated network, disk, clocks and
        // processes, and the invariant checks (docs/SIMULATION.md).
        .target(
            name: "Simulation",
            dependencies: ["Nodes", "LinkProtocol", "SyncEngine", "WatchEngine", "WorkoutModel", "AdminCommands"],
            path: "Sources/Tools/Simulation", swiftSettings: swiftSettings),
        .executableTarget(
            name: "simulate", dependencies: ["Simulation"], path: "Sources/Tools/simulate", swiftSettings: swiftSettings
        ),
        // I/O: what both daemons need around their engines — structured logs, systemd notify and
        // watchdog, the admin Unix socket's server, the launch sequence (config, signals, readiness).
        .target(
            name: "DaemonRuntime",
            dependencies: [
                "LinkRuntime", "DurableFiles", "AdminCommands", "POSIX", "DaemonConfiguration", "Trace", "Nodes",
            ],
            path: "Sources/Runtime/DaemonRuntime", swiftSettings: swiftSettings),
        // I/O: the daemons' config files — each key declared once (name, type, default, doc line).
        .target(
            name: "DaemonConfiguration", dependencies: ["POSIX"], path: "Sources/Runtime/DaemonConfiguration",
            swiftSettings: swiftSettings),
        // I/O: what an admin CLI is — parse argv with its grammar, send the typed command over the
        // daemon's Unix socket, print the reply. No link runtime, no libcrypto.
        .target(
            name: "AdminClient", dependencies: ["AdminCommands", "ArgumentParsing", "POSIX"],
            path: "Sources/Runtime/AdminClient", swiftSettings: swiftSettings),
        // The phone daemon and its admin CLI.
        .executableTarget(
            name: "phoned",
            dependencies: [
                "AdminCommands", "SyncEngine", "PhoneStore", "DaemonRuntime", "LinkRuntime", "DaemonConfiguration",
                "POSIX",
            ],
            path: "Sources/Apps/phoned", swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "phonectl", dependencies: ["AdminCommands", "AdminClient", "DaemonConfiguration"],
            path: "Sources/Apps/phonectl", swiftSettings: swiftSettings),
        // The watch daemon and its admin CLI.
        .executableTarget(
            name: "watchd",
            dependencies: [
                "AdminCommands", "WatchEngine", "WatchStore", "DaemonRuntime", "LinkRuntime", "DaemonConfiguration",
                "POSIX",
            ],
            path: "Sources/Apps/watchd", swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "watchctl", dependencies: ["AdminCommands", "AdminClient", "DaemonConfiguration"],
            path: "Sources/Apps/watchctl", swiftSettings: swiftSettings),
        // scripts/trace: both daemons' journals merged into one mermaid sequenceDiagram, or drawn as an SVG
        // or an HTML page through PlantUML (docs/TRACE.md).
        .executableTarget(
            name: "tracediagram",
            dependencies: ["AdminCommands", "ArgumentParsing", "ChildProcesses", "DurableFiles", "Trace"],
            path: "Sources/Tools/tracediagram", swiftSettings: swiftSettings),
        // A bare link endpoint for tests and experiments: queues transfers, records what it applies.
        .executableTarget(
            name: "linkpeer", dependencies: ["LinkRuntime", "POSIX"], path: "Sources/Tools/linkpeer",
            swiftSettings: swiftSettings),
        // I/O: the one launcher of the test harness and the chaos tester — posix_spawn (never Foundation's
        // Process), output to files or captured through close-on-exec pipes, signals, reaping with a timeout.
        // Also the runner of the Debian renderers the pictures need (PlantUML, gnuplot): found or named.
        .target(
            name: "ChildProcesses", dependencies: ["POSIX", "Plots"], path: "Sources/Tools/ChildProcesses",
            swiftSettings: swiftSettings),
        // Pure: a chart (series of numbers, how each is drawn) as a data file and a gnuplot script; the
        // testers' and the bench's `--plot` (ChildProcesses runs gnuplot on them).
        .target(name: "Plots", path: "Sources/Tools/Plots", swiftSettings: swiftSettings),
        // The kill/restart and network-partition testers behind scripts/kill-test and scripts/partition-test.
        .executableTarget(
            name: "chaostest",
            dependencies: [
                "ChildProcesses", "TestSupport", "WorkoutModel", "DaemonRuntime", "DaemonConfiguration", "Nodes",
                "LinkProtocol", "LinkRuntime", "AdminCommands", "Plots",
            ],
            path: "Sources/Tools/chaostest", swiftSettings: swiftSettings),
        // scripts/bench: our figures next to the machine's limits and SQLite, in one run.
        .executableTarget(
            name: "bench",
            dependencies: [
                "LinkRuntime", "DurableFiles", "SyncEngine", "PhoneStore", "WorkoutModel", "TestSupport",
                "DaemonRuntime", "AdminCommands", "AdminClient", "DaemonConfiguration", "POSIX", "ChildProcesses",
                "Plots",
            ],
            path: "Sources/Tools/bench", swiftSettings: swiftSettings),
        // Test-only: manual clock, temporary directories, free ports, spawning daemons (their config
        // files written from DaemonRuntime's key declarations).
        .target(
            name: "TestSupport",
            dependencies: [
                "ChildProcesses", "WorkoutModel", "DaemonRuntime", "DaemonConfiguration", "POSIX",
            ],
            path: "Sources/Tools/TestSupport", swiftSettings: swiftSettings),
        // The fuzz targets' entry points and properties, shared by scripts/fuzz's libFuzzer harnesses and
        // the corpus replay in FuzzCorpusTests (docs/FUZZING.md).
        .target(
            name: "FuzzTargets",
            dependencies: [
                "LinkProtocol", "LinkRuntime", "DurableFiles", "WorkoutModel", "SyncEngine", "WatchEngine",
                "PhoneStore", "ArgumentParsing", "AdminCommands", "DaemonRuntime", "DaemonConfiguration",
            ],
            path: "Sources/Tools/FuzzTargets", swiftSettings: swiftSettings),

        .testTarget(
            name: "WorkoutModelTests",
            dependencies: ["WorkoutModel", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "TraceTests", dependencies: ["Trace", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "PlotsTests", dependencies: ["Plots"], swiftSettings: swiftSettings),
        .testTarget(
            name: "LinkProtocolTests",
            dependencies: ["LinkProtocol"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LinkRuntimeTests",
            dependencies: ["LinkRuntime", "DurableFiles", "POSIX", "TestSupport", "Trace"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SyncEngineTests",
            dependencies: ["SyncEngine", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "WatchEngineTests",
            dependencies: ["WatchEngine", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PhoneStoreTests",
            dependencies: ["PhoneStore", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LiveMirrorTests",
            dependencies: ["LiveMirror", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "WatchStoreTests",
            dependencies: ["WatchStore", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ArgumentParsingTests",
            dependencies: ["ArgumentParsing", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AdminCommandsTests",
            dependencies: ["AdminCommands"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "DaemonRuntimeTests",
            dependencies: [
                "DaemonRuntime", "AdminCommands", "ArgumentParsing", "TestSupport", "POSIX", "DaemonConfiguration",
                "AdminClient",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "TestSupport", "WorkoutModel", "DaemonRuntime", "AdminCommands", "ArgumentParsing", "Nodes",
                "LinkProtocol", "AdminClient", "POSIX", "PhoneStore",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NodesTests",
            dependencies: ["Nodes", "SyncEngine", "WatchEngine", "LinkProtocol", "AdminCommands", "WorkoutModel"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "SimulationTests", dependencies: ["Simulation"], swiftSettings: swiftSettings),
        .testTarget(name: "ChaosTestTests", dependencies: ["chaostest", "Plots"], swiftSettings: swiftSettings),
        .testTarget(
            name: "FuzzCorpusTests", dependencies: ["FuzzTargets", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PackageChecks", dependencies: ["ChildProcesses", "TestSupport"], swiftSettings: swiftSettings),
    ]
)
