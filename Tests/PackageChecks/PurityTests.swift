import Foundation
import TestSupport
import Testing

/// Modules that decide and must never do I/O (ARCHITECTURE.md §2, STYLE.md §1).
let pureModules: Set<String> = [
    "WorkoutModel", "LinkProtocol", "WatchEngine", "SyncEngine", "ArgumentParsing", "LiveMirror", "AdminCommands",
    "Trace", "Nodes", "Simulation", "Plots",
]
/// Modules that are the I/O shell around them.
let shellModules: Set<String> = [
    "POSIX", "ChildProcesses", "DaemonConfiguration", "AdminClient", "DurableFiles", "LinkRuntime", "COpenSSL",
    "TestSupport", "linkpeer", "PhoneStore",
    "DaemonRuntime", "WatchStore", "phoned", "watchd", "phonectl", "watchctl", "chaostest", "bench", "FuzzTargets",
    "tracediagram", "simulate",
]

/// What a pure module may not mention: platform I/O modules, the real clock, random sources, sleeps,
/// files and sockets, and the file and process calls FoundationEssentials keeps (reading and writing
/// whole files, the environment).
let forbiddenInPureCode = [
    "import Glibc", "import Musl", "import Darwin", "import Dispatch", "import Foundation\n", "import Foundation ",
    "FileManager", "FileHandle", "Date()", "Date.now", "UUID()", "Task.sleep", "DispatchQueue", "ContinuousClock",
    "SuspendingClock", "SystemRandomNumberGenerator", ".random(", "socket(", "fopen(", "Process(",
    "contentsOfFile:", "Data(contentsOf:", "String(contentsOf:", "write(toFile:", "atomically:", "ProcessInfo",
]

/// `source` without its `//` comments, ending in a newline.
func codeWithoutComments(_ source: String) -> String {
    source.split(separator: "\n", omittingEmptySubsequences: false)
        .map { line -> String in
            guard let comment = line.range(of: "//") else { return String(line) }
            return String(line[..<comment.lowerBound])
        }
        .joined(separator: "\n") + "\n"
}

/// The forbidden tokens found in `source`, ignoring `//` comments.
func purityViolations(in source: String) -> [String] {
    let code = codeWithoutComments(source)
    return forbiddenInPureCode.filter { code.contains($0) }
}

/// The modules under Sources/ (every target of `Package.swift` but the test targets) and their folders.
func sourceModules() throws -> [String: String] {
    Dictionary(
        uniqueKeysWithValues: try packageTargets().filter { !$0.path.hasPrefix("Tests/") }.map { ($0.name, $0.path) })
}

/// The Swift sources of `module` (in its folder from `Package.swift`), as (path relative to the tree, contents).
func sources(of module: String) throws -> [(path: String, text: String)] {
    guard let folder = try sourceModules()[module] else { throw UnknownModule(name: module) }
    let directory = "\(SourceTree.root)/\(folder)"
    return try FileManager.default.subpathsOfDirectory(atPath: directory).sorted()
        .filter { $0.hasSuffix(".swift") }
        .map { ("\(folder)/\($0)", try String(contentsOfFile: "\(directory)/\($0)", encoding: .utf8)) }
}

/// A module name that is not a target of `Package.swift`.
struct UnknownModule: Error, CustomStringConvertible {
    var name: String
    var description: String { "\(name) is not a target of Package.swift" }
}

@Suite("Package checks")
struct PurityTests {
    @Test("every Sources/ module is classified as pure or shell")
    func everyModuleClassified() throws {
        let modules = Set(try sourceModules().keys)
        #expect(modules.count > 25, "the manifest parse found \(modules.count) modules")
        let unclassified = modules.subtracting(pureModules).subtracting(shellModules)
        #expect(unclassified.isEmpty, "classify these modules in PurityTests.swift: \(unclassified.sorted())")
    }

    @Test("pure modules do no I/O, read no clock and draw no randomness")
    func pureModulesArePure() throws {
        var violations: [String] = []
        for module in pureModules.sorted() {
            for (path, source) in try sources(of: module) {
                violations += purityViolations(in: source).map { "\(path): \($0.debugDescription)" }
            }
        }
        #expect(violations.isEmpty, "pure modules must stay pure:\n\(violations.joined(separator: "\n"))")
    }

    @Test("the admin CLIs import neither the link runtime nor libcrypto, directly or through a module they import")
    func cliDependenciesAreSmall() throws {
        let modules = Set(try sourceModules().keys)
        /// The package's modules `module`'s sources import.
        func imports(of module: String) throws -> Set<String> {
            var found: Set<String> = []
            for (_, source) in try sources(of: module) {
                for line in source.split(separator: "\n") where line.hasPrefix("import ") {
                    let name = String(line.dropFirst("import ".count))
                    if modules.contains(name) { found.insert(name) }
                }
            }
            return found
        }
        for cli in ["phonectl", "watchctl"] {
            var closure: Set<String> = []
            var pending = [cli]
            while let next = pending.popLast() {
                for module in try imports(of: next) where closure.insert(module).inserted { pending.append(module) }
            }
            #expect(
                closure.isDisjoint(with: ["LinkRuntime", "COpenSSL", "DaemonRuntime"]),
                "\(cli) reaches \(closure.sorted())")
            #expect(closure.contains("AdminClient"))
        }
    }

    @Test("the purity scan catches an I/O import and ignores comments")
    func scanWorks() {
        #expect(purityViolations(in: "import Glibc\nlet x = 1") == ["import Glibc"])
        #expect(purityViolations(in: "import Foundation\n") == ["import Foundation\n"])
        #expect(purityViolations(in: "import FoundationEssentials\n").isEmpty)
        #expect(purityViolations(in: "let bytes = try Data(contentsOf: url)") == ["Data(contentsOf:"])
        #expect(purityViolations(in: "bytes.append(contentsOf: more)").isEmpty)
        #expect(purityViolations(in: "let now = Date.now // comment").count == 1)
        #expect(purityViolations(in: "// never calls Date() or UUID()\nlet a = 1").isEmpty)
    }
}
