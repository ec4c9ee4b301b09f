import Foundation
import TestSupport
import Testing

/// The folders under Sources/, lowest first: a target lives in `Sources/<layer>/<name>` and depends only
/// on targets of its own layer or a lower one (docs/ARCHITECTURE.md, "The source tree").
let layers = ["Model", "Runtime", "Apps", "Tools"]

/// What is wrong with where `targets` (the non-test targets) sit: a folder that is not
/// `Sources/<layer>/<name>`, a pure module outside `Model` or `Tools`, an I/O module in `Model`, a
/// dependency on a higher layer.
func layoutViolations(of targets: [ManifestTarget]) -> [String] {
    var layerOf: [String: Int] = [:]
    var violations: [String] = []
    for target in targets {
        let parts = target.path.split(separator: "/").map(String.init)
        guard parts.count == 3, parts[0] == "Sources", let layer = layers.firstIndex(of: parts[1]),
            parts[2] == target.name
        else {
            violations.append(
                "\(target.name): \(target.path) is not Sources/<\(layers.joined(separator: "|"))>/\(target.name)")
            continue
        }
        layerOf[target.name] = layer
        if layers[layer] == "Model" && !pureModules.contains(target.name) {
            violations.append("\(target.name): in Model/ but not a pure module")
        }
        if ["Runtime", "Apps"].contains(layers[layer]) && pureModules.contains(target.name) {
            violations.append("\(target.name): a pure module in \(layers[layer])/ (pure product code goes in Model/)")
        }
    }
    for target in targets {
        guard let layer = layerOf[target.name] else { continue }
        for dependency in target.dependencies {
            if let other = layerOf[dependency], other > layer {
                violations.append("\(target.name) (\(layers[layer])) depends on \(dependency) (\(layers[other]))")
            }
        }
    }
    return violations
}

@Suite("Package checks: the source tree shows the layers")
struct LayoutTests {
    @Test("every module sits in Sources/<layer>/<name>, pure product code in Model/, and depends on no higher layer")
    func modulesSitInTheirLayer() throws {
        let targets = try packageTargets().filter { !$0.path.hasPrefix("Tests/") }
        #expect(targets.count > 25, "the manifest parse found \(targets.count) modules")
        let violations = layoutViolations(of: targets)
        #expect(violations.isEmpty, "fix Package.swift's path: or the folder:\n\(violations.joined(separator: "\n"))")
    }

    @Test("Sources/ holds the layer folders only, and each of their folders is a target of Package.swift")
    func noUndeclaredFolders() throws {
        let root = "\(SourceTree.root)/Sources"
        let declared = Set(try sourceModules().values)
        var strays: [String] = []
        for entry in try FileManager.default.contentsOfDirectory(atPath: root).sorted() {
            guard layers.contains(entry) else {
                strays.append("Sources/\(entry): not a layer (\(layers.joined(separator: ", ")))")
                continue
            }
            for folder in try FileManager.default.contentsOfDirectory(atPath: "\(root)/\(entry)").sorted()
            where !declared.contains("Sources/\(entry)/\(folder)") {
                strays.append(
                    "Sources/\(entry)/\(folder): no target of Package.swift has this path (SwiftPM ignores it)")
            }
        }
        #expect(strays.isEmpty, "\(strays.joined(separator: "\n"))")
    }

    @Test("the check is meaningful: a flat folder, an I/O module in Model/ and an upward dependency are caught")
    func checkCatchesMisplacedModules() {
        let targets = [
            ManifestTarget(name: "WorkoutModel", path: "Sources/WorkoutModel", dependencies: []),
            ManifestTarget(name: "POSIX", path: "Sources/Model/POSIX", dependencies: []),
            ManifestTarget(name: "SyncEngine", path: "Sources/Model/SyncEngine", dependencies: ["TestSupport"]),
            ManifestTarget(name: "TestSupport", path: "Sources/Tools/TestSupport", dependencies: ["SyncEngine"]),
        ]
        #expect(
            layoutViolations(of: targets) == [
                "WorkoutModel: Sources/WorkoutModel is not Sources/<Model|Runtime|Apps|Tools>/WorkoutModel",
                "POSIX: in Model/ but not a pure module",
                "SyncEngine (Model) depends on TestSupport (Tools)",
            ])
    }
}
