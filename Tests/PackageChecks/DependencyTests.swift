import Foundation
import TestSupport
import Testing

/// One target of `Package.swift`: its folder (its `path:`, else `Sources/<name>` or `Tests/<name>`)
/// and the names in its `dependencies: […]`.
struct ManifestTarget {
    var name: String
    var path: String
    var dependencies: [String]
}

/// `Package.swift`'s targets, in the manifest's order.
func packageTargets() throws -> [ManifestTarget] {
    let manifest = try String(contentsOfFile: "\(SourceTree.root)/Package.swift", encoding: .utf8)
    let declaration = /\.(target|executableTarget|testTarget|systemLibrary)\(/
    let name = /name:\s*"([^"]+)"/
    let path = /path:\s*"([^"]+)"/
    let dependencies = /dependencies:\s*\[([^\]]*)\]/
    var targets: [ManifestTarget] = []
    let kinds = manifest.matches(of: declaration).map { String($0.1) }
    for (kind, chunk) in zip(kinds, manifest.split(separator: declaration).dropFirst()) {
        guard let target = chunk.firstMatch(of: name)?.1 else { continue }
        let folder =
            chunk.firstMatch(of: path).map { String($0.1) } ?? "\(kind == "testTarget" ? "Tests" : "Sources")/\(target)"
        let list = chunk.firstMatch(of: dependencies)?.1 ?? ""
        targets.append(
            ManifestTarget(
                name: String(target), path: folder, dependencies: list.matches(of: /"([^"]+)"/).map { String($0.1) }))
    }
    return targets
}

/// The modules `source` imports (`import X`, `@testable import X`, `import struct X.Y`), comments ignored.
func importedModules(in source: String) -> Set<String> {
    let statement =
        /^\s*(?:@\w+(?:\([^)]*\))?\s+)*import\s+(?:(?:struct|class|enum|protocol|typealias|func|var|let)\s+)?(\w+)/
    var modules: Set<String> = []
    for line in codeWithoutComments(source).split(separator: "\n") {
        if let found = line.firstMatch(of: statement) { modules.insert(String(found.1)) }
    }
    return modules
}

/// The modules the Swift files under `folder` (relative to the tree) import.
func importedModules(under folder: String) throws -> Set<String> {
    let directory = "\(SourceTree.root)/\(folder)"
    var modules: Set<String> = []
    for file in try FileManager.default.subpathsOfDirectory(atPath: directory) where file.hasSuffix(".swift") {
        modules.formUnion(importedModules(in: try String(contentsOfFile: "\(directory)/\(file)", encoding: .utf8)))
    }
    return modules
}

/// Every target `targets` reach through `graph` (one of them only when a cycle leads back to it).
func dependencyClosure(of targets: [String], in graph: [String: [String]]) -> Set<String> {
    var closure: Set<String> = []
    var pending = targets.flatMap { graph[$0] ?? [] }
    while let next = pending.popLast() {
        if closure.insert(next).inserted { pending += graph[next] ?? [] }
    }
    return closure
}

/// What a pure module may import besides other pure modules: the part of Foundation with no files,
/// processes or sockets.
let pureSystemModules: Set<String> = ["FoundationEssentials"]

@Suite("Package checks: what Package.swift declares is what the code uses")
struct DependencyTests {
    @Test("every dependency a target declares is imported by one of its source files")
    func noUnusedDependencies() throws {
        let targets = try packageTargets()
        #expect(targets.count > 40, "the manifest parse found \(targets.count) targets")
        var unused: [String] = []
        for target in targets where !target.dependencies.isEmpty {
            let imported = try importedModules(under: target.path)
            for dependency in target.dependencies where !imported.contains(dependency) {
                unused.append("\(target.name) → \(dependency)")
            }
        }
        #expect(
            unused.isEmpty,
            "drop these from Package.swift (no file of the target imports them):\n\(unused.joined(separator: "\n"))")
    }

    @Test("a pure module depends on and imports only pure modules and FoundationEssentials")
    func pureModulesUseOnlyPureModules() throws {
        let targets = Dictionary(uniqueKeysWithValues: try packageTargets().map { ($0.name, $0) })
        var violations: [String] = []
        for module in pureModules.sorted() {
            guard let target = targets[module] else {
                violations.append("\(module): not a target in Package.swift")
                continue
            }
            for dependency in target.dependencies where !pureModules.contains(dependency) {
                violations.append("\(module) declares \(dependency)")
            }
            let imported = try importedModules(under: target.path)
            for name in imported.subtracting(pureModules).subtracting(pureSystemModules).sorted() {
                violations.append("\(module) imports \(name)")
            }
        }
        #expect(violations.isEmpty, "pure modules must not reach I/O:\n\(violations.joined(separator: "\n"))")
    }

    @Test("the stores and tracediagram link neither the link runtime nor libcrypto, only the durable files")
    func storesAvoidTheLinkRuntime() throws {
        let graph = Dictionary(uniqueKeysWithValues: try packageTargets().map { ($0.name, $0.dependencies) })
        for target in ["PhoneStore", "WatchStore", "tracediagram"] {
            let closure = dependencyClosure(of: [target], in: graph)
            #expect(closure.isDisjoint(with: ["COpenSSL", "LinkRuntime"]), "\(target) links \(closure.sorted())")
            #expect(closure.contains("DurableFiles"), "\(target) links \(closure.sorted())")
        }
        #expect(dependencyClosure(of: ["DurableFiles"], in: graph).isDisjoint(with: ["COpenSSL", "LinkRuntime"]))
    }

    @Test("the node layer refuses with its own errors: it neither imports the CLI's parser nor throws UsageError")
    func nodesKeepOutOfTheCommandLine() throws {
        var violations: [String] = []
        for (path, source) in try sources(of: "Nodes") {
            let code = codeWithoutComments(source)
            if importedModules(in: code).contains("ArgumentParsing") {
                violations.append("\(path): import ArgumentParsing")
            }
            if code.contains("UsageError") { violations.append("\(path): UsageError") }
        }
        #expect(violations.isEmpty, "use AdminRefusal:\n\(violations.joined(separator: "\n"))")
    }

    @Test("the import scan reads attributed and scoped imports and ignores comments")
    func scanWorks() {
        #expect(importedModules(in: "import Foundation\n@testable import chaostest\n") == ["Foundation", "chaostest"])
        #expect(importedModules(in: "import struct POSIX.FileDescriptor\n  import Trace") == ["POSIX", "Trace"])
        #expect(importedModules(in: "// import Glibc\nlet important = 1\n/// import LinkRuntime").isEmpty)
        #expect(
            dependencyClosure(of: ["a"], in: ["a": ["b"], "b": ["c", "a"], "c": []]) == ["a", "b", "c"],
            "a cycle ends")
    }
}
