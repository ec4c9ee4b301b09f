/// Where an admin CLI finds its daemon's socket, in order: `--socket PATH`; the `adminSocket` of the
/// daemon's config file named by `--config FILE`; the environment variable (`$PHONED_ADMIN_SOCKET`);
/// then, with none of these given, the repository's `run/phoned.sock` — in the current directory or
/// the nearest directory above it that has one, where `scripts/run` puts it — and last the installed
/// daemon's `/run/watchsync/phoned.sock` (the systemd units' runtime directory).
///
/// A socket named by the first three is used alone: a daemon that is not there is reported, never
/// replaced by another one found elsewhere. The two looked for are tried in order, the first that
/// answers used (`CLIRunner`). Pure: the files that exist come in as `exists`, the config file's
/// socket as `adminSocketFromConfig`.
package struct SocketSearch: Sendable, Equatable {
    /// The socket relative to a repository's root: `run/phoned.sock` (config/phoned.json's `adminSocket`).
    package var repositorySocket: String
    /// The installed daemon's socket: `/run/watchsync/phoned.sock` (config/systemd/phoned.json's).
    package var installedSocket: String
    /// The variable naming the socket: `PHONED_ADMIN_SOCKET`.
    package var environmentVariable: String

    package init(repositorySocket: String, installedSocket: String, environmentVariable: String) {
        self.repositorySocket = repositorySocket
        self.installedSocket = installedSocket
        self.environmentVariable = environmentVariable
    }

    /// The sockets `scripts/run` and the systemd units make for `daemon` (`phoned`, `watchd`).
    package init(daemon: String, environmentVariable: String) {
        self.init(
            repositorySocket: "run/\(daemon).sock", installedSocket: "/run/watchsync/\(daemon).sock",
            environmentVariable: environmentVariable)
    }

    /// The socket to use, or the ones to try. Throws what `adminSocketFromConfig` throws: a `--config`
    /// file that cannot be used is the caller's usage error, not a reason to look elsewhere.
    package func choose(
        socket: String?, config: String?, environment: [String: String], currentDirectory: String,
        exists: (String) -> Bool, adminSocketFromConfig: (String) throws -> String
    ) rethrows -> SocketChoice {
        if let socket { return .named(path: socket, source: .socketOption) }
        if let config { return .named(path: try adminSocketFromConfig(config), source: .configOption(file: config)) }
        if let path = environment[environmentVariable], !path.isEmpty {
            return .named(path: path, source: .environment(variable: environmentVariable))
        }
        return .search(repository: repositorySocket(from: currentDirectory, exists: exists), installed: installedSocket)
    }

    /// `<directory>/run/phoned.sock` for the current directory or the nearest one above it where that
    /// exists; nil when none has it. The filesystem root is never one: its `run/` is the system's.
    func repositorySocket(from currentDirectory: String, exists: (String) -> Bool) -> String? {
        var directory = Self.normalized(currentDirectory)
        while directory != "/" {
            let candidate = "\(directory)/\(repositorySocket)"
            if exists(candidate) { return candidate }
            directory = Self.parent(of: directory)
        }
        return nil
    }

    /// `path` without a trailing slash (`/` stays `/`).
    private static func normalized(_ path: String) -> String {
        var path = Substring(path)
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        return path.isEmpty ? "/" : String(path)
    }

    /// The directory holding `path` (`/` for a top-level one, and for a relative one without a slash).
    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}

/// What named the socket a CLI uses.
package enum SocketSource: Equatable, Sendable, CustomStringConvertible {
    /// `--socket PATH`.
    case socketOption
    /// `--config FILE`: its `adminSocket`.
    case configOption(file: String)
    /// `$PHONED_ADMIN_SOCKET`.
    case environment(variable: String)

    package var description: String {
        switch self {
        case .socketOption: "--socket"
        case .configOption(let file): "--config \(file)"
        case .environment(let variable): "$\(variable)"
        }
    }
}

/// How a CLI reaches its daemon (`SocketSearch.choose`).
package enum SocketChoice: Equatable, Sendable {
    /// Named by `source`: used alone.
    case named(path: String, source: SocketSource)
    /// Nothing named one: the repository's socket when one was found, then the installed one,
    /// tried in that order.
    case search(repository: String?, installed: String)

    /// The sockets to try, in order.
    package var paths: [String] {
        switch self {
        case .named(let path, _): [path]
        case .search(let repository, let installed): (repository.map { [$0] } ?? []) + [installed]
        }
    }
}
