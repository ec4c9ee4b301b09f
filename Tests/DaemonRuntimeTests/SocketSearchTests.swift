import AdminClient
import DaemonConfiguration
import TestSupport
import Testing

/// Which admin socket a CLI talks to, as pure logic: the command line, the environment and the files
/// that exist in, the choice out.
@Suite("Finding the daemon: --socket, --config, the environment, run/ here or above, then the installed socket")
struct SocketSearchTests {
    static let search = SocketSearch(daemon: "phoned", environmentVariable: "PHONED_ADMIN_SOCKET")
    static let repository = "/home/me/watchsync"

    static func choose(
        socket: String? = nil, config: String? = nil, environment: [String: String] = [:],
        in directory: String = "\(repository)/Sources/Runtime/AdminClient", existing: Set<String> = []
    ) throws -> SocketChoice {
        try search.choose(
            socket: socket, config: config, environment: environment, currentDirectory: directory,
            exists: { existing.contains($0) }, adminSocketFromConfig: { "/from-config/\($0)" })
    }

    @Test("the sockets looked for are the ones scripts/run and the systemd units make")
    func paths() {
        #expect(Self.search.repositorySocket == "run/phoned.sock")
        #expect(Self.search.installedSocket == "/run/watchsync/phoned.sock")
        let watch = SocketSearch(daemon: "watchd", environmentVariable: "WATCHD_ADMIN_SOCKET")
        #expect(watch.repositorySocket == "run/watchd.sock" && watch.installedSocket == "/run/watchsync/watchd.sock")
    }

    @Test("they are the sockets config/phoned.json, config/watchd.json and their systemd twins name")
    func pathsMatchConfigs() throws {
        let root = SourceTree.root
        let phone = try PhonedConfiguration.load(path: "\(root)/config/phoned.json", workingDirectory: root)
        let watch = try WatchdConfiguration.load(path: "\(root)/config/watchd.json", workingDirectory: root)
        let watchSearch = SocketSearch(daemon: "watchd", environmentVariable: "WATCHD_ADMIN_SOCKET")
        #expect(phone.adminSocket == "\(root)/\(Self.search.repositorySocket)")
        #expect(watch.adminSocket == "\(root)/\(watchSearch.repositorySocket)")
        #expect(
            try PhonedConfiguration.load(path: "\(root)/config/systemd/phoned.json").adminSocket
                == Self.search.installedSocket)
        #expect(
            try WatchdConfiguration.load(path: "\(root)/config/systemd/watchd.json").adminSocket
                == watchSearch.installedSocket)
    }

    @Test("--socket wins over everything else")
    func socketFirst() throws {
        let choice = try Self.choose(
            socket: "/s.sock", config: "c.json", environment: ["PHONED_ADMIN_SOCKET": "/e.sock"],
            existing: ["\(Self.repository)/run/phoned.sock"])
        #expect(choice == .named(path: "/s.sock", source: .socketOption))
    }

    @Test("--config comes next: the adminSocket of that file")
    func configSecond() throws {
        let choice = try Self.choose(
            config: "c.json", environment: ["PHONED_ADMIN_SOCKET": "/e.sock"],
            existing: ["\(Self.repository)/run/phoned.sock"])
        #expect(choice == .named(path: "/from-config/c.json", source: .configOption(file: "c.json")))
    }

    @Test("a --config file that cannot be used is an error, not a reason to look elsewhere")
    func unusableConfig() {
        struct Unreadable: Error {}
        #expect(throws: Unreadable.self) {
            try Self.search.choose(
                socket: nil, config: "absent.json", environment: ["PHONED_ADMIN_SOCKET": "/e.sock"],
                currentDirectory: "/", exists: { _ in true }, adminSocketFromConfig: { _ in throw Unreadable() })
        }
    }

    @Test("then the environment variable; an empty one counts as unset")
    func environmentThird() throws {
        let existing: Set = ["\(Self.repository)/run/phoned.sock"]
        #expect(
            try Self.choose(environment: ["PHONED_ADMIN_SOCKET": "/e.sock"], existing: existing)
                == .named(path: "/e.sock", source: .environment(variable: "PHONED_ADMIN_SOCKET")))
        #expect(
            try Self.choose(environment: ["PHONED_ADMIN_SOCKET": ""], existing: existing)
                == .search(repository: "\(Self.repository)/run/phoned.sock", installed: "/run/watchsync/phoned.sock"))
    }

    @Test("then run/phoned.sock in the current directory or the nearest directory above it that has one")
    func repositorySocket() throws {
        let installed = "/run/watchsync/phoned.sock"
        #expect(
            try Self.choose(in: Self.repository, existing: ["\(Self.repository)/run/phoned.sock"])
                == .search(repository: "\(Self.repository)/run/phoned.sock", installed: installed))
        #expect(
            try Self.choose(
                in: "\(Self.repository)/Tests/EndToEndTests",
                existing: ["\(Self.repository)/run/phoned.sock", "/home/me/run/phoned.sock"])
                == .search(repository: "\(Self.repository)/run/phoned.sock", installed: installed))
        #expect(
            try Self.choose(in: "\(Self.repository)/Sources/", existing: ["/home/me/run/phoned.sock"])
                == .search(repository: "/home/me/run/phoned.sock", installed: installed))
        // Another daemon's socket, or a run/ directory without this one, is not a find.
        #expect(
            try Self.choose(existing: ["\(Self.repository)/run/watchd.sock", "\(Self.repository)/run"])
                == .search(repository: nil, installed: installed))
    }

    @Test("with none found, only the installed socket; the root's run/ is the system's, never a repository's")
    func installedLast() throws {
        #expect(
            try Self.choose(in: "/", existing: ["/run/phoned.sock"])
                == .search(repository: nil, installed: "/run/watchsync/phoned.sock"))
        #expect(
            try Self.choose(in: "/srv/data", existing: ["/run/phoned.sock", "/run/watchsync/phoned.sock"])
                == .search(repository: nil, installed: "/run/watchsync/phoned.sock"))
        #expect(
            SocketChoice.search(repository: "/r/run/phoned.sock", installed: "/i.sock").paths
                == ["/r/run/phoned.sock", "/i.sock"])
    }
}
