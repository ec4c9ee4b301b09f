import Foundation
import TestSupport
import Testing

/// Test tools that keep their own `import Glibc`: they act on processes and sockets from outside
/// (posix_spawn, kill, fault-injecting proxies, raw sockets for baselines) and ship in no product.
let glibcTestTools: Set<String> = ["ChildProcesses", "TestSupport", "bench", "chaostest", "linkpeer"]

/// libc calls only POSIX may make. `import Foundation` re-exports Glibc on Linux, so the import
/// check alone would let them back in; these spellings are unmistakable (a bare call, not a method).
let rawLibcCalls = [
    "Glibc.", "errno ==", "errno !=", "= errno", "pthread_", "inotify_", "fsync(", "fdatasync(", "opendir(",
    "readdir(", "lstat(", "fstat(", "fstatat(", "unlink(", "mkdir(", "clock_gettime(", "sigwait(", "socket(",
    "socketpair(", "setsockopt(", "sendto(", "recv(", "poll(", "usleep(", "getpid(", "dlsym(", "strerror(",
]

/// The raw libc calls in `source` (comments ignored): each token where it is not part of a longer
/// name or a member access (`error.errno == …`, `FileSystem.removeFile(…)` are fine).
func rawLibcCalls(in source: String) -> [String] {
    let code = codeWithoutComments(source)
    return rawLibcCalls.filter { token in
        var rest = code[...]
        while let found = rest.range(of: token) {
            let before = found.lowerBound == code.startIndex ? " " : code[code.index(before: found.lowerBound)]
            if !(before.isLetter || before.isNumber || before == "_" || before == ".") { return true }
            rest = code[found.upperBound...]
        }
        return false
    }
}

/// `Package.swift`'s targets and the names in each one's `dependencies: […]`.
func packageDependencies() throws -> [String: [String]] {
    Dictionary(uniqueKeysWithValues: try packageTargets().map { ($0.name, $0.dependencies) })
}

@Suite("Package checks: one module talks to the system")
struct SystemCallTests {
    @Test("among the product modules only POSIX imports Glibc or calls libc directly")
    func onlyPOSIXTalksToTheSystem() throws {
        var violations: [String] = []
        for module in shellModules.union(pureModules).subtracting(glibcTestTools.union(["POSIX"])).sorted() {
            for (path, source) in try sources(of: module) {
                let code = codeWithoutComments(source)
                if code.contains("import Glibc") { violations.append("\(path): import Glibc") }
                violations += rawLibcCalls(in: source).map { "\(path): \($0.debugDescription)" }
            }
        }
        #expect(violations.isEmpty, "move these into Sources/Runtime/POSIX:\n\(violations.joined(separator: "\n"))")
    }

    @Test("the scan catches a bare libc call and passes members and longer names")
    func scanWorks() {
        #expect(rawLibcCalls(in: "guard fsync(fd) == 0 else { return }") == ["fsync("])
        #expect(rawLibcCalls(in: "if errno == EINTR { continue }") == ["errno =="])
        #expect(rawLibcCalls(in: "try AtomicFile.fsyncDirectory(path); try file.sync()").isEmpty)
        #expect(rawLibcCalls(in: "if error.errno == Errno.noSuchFile { return nil }").isEmpty)
        #expect(rawLibcCalls(in: "// calls unlink(2)\nlet a = 1").isEmpty)
    }

    @Test("phonectl and watchctl link only the admin client, their grammar and the config reader")
    func cliLinkGraph() throws {
        let graph = try packageDependencies()
        for cli in ["phonectl", "watchctl"] {
            var closure: Set<String> = []
            var pending = graph[cli] ?? []
            while let next = pending.popLast() {
                if closure.insert(next).inserted { pending += graph[next] ?? [] }
            }
            #expect(
                closure == [
                    "AdminClient", "AdminCommands", "ArgumentParsing", "DaemonConfiguration", "POSIX", "Trace",
                    "WorkoutModel",
                ], "\(cli) links \(closure.sorted())")
            #expect(closure.isDisjoint(with: ["LinkRuntime", "LinkProtocol", "COpenSSL", "DaemonRuntime"]))
        }
        #expect(graph["LinkRuntime"]?.contains("COpenSSL") == true, "the manifest parse found no dependencies")
    }
}
