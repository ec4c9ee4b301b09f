import SyncEngine
import WorkoutModel

/// One folder of the document layout, named by its place in it rather than by its path.
///
/// ```
/// <root>/Splits/<splitID>.json
/// <root>/Workouts/<YYYY>/<MM>/<workoutID>.json   (UTC year and month of the run's startedAt)
/// <root>/Stubs/<id>.json                         (tombstones)
/// ```
///
/// Only `splits`, `stubs` and `month` hold documents; the others hold folders. A year is exactly
/// four digits and a month exactly two (`01`–`12`), the form `DocumentDirectory` writes, so every
/// run has one folder it can live in.
package enum DocumentFolder: Hashable, Sendable, CustomStringConvertible {
    case root
    case splits
    case stubs
    case workouts
    case year(Int)
    case month(year: Int, month: Int)

    /// The folder a run started at `startedAt` lives in.
    package static func month(of startedAt: Timestamp) -> DocumentFolder {
        let (year, month) = startedAt.yearAndMonth
        return .month(year: year, month: month)
    }

    /// The path relative to the root (`""` for the root itself), e.g. `Workouts/2026/01`.
    package var relativePath: String {
        switch self {
        case .root: return ""
        case .splits: return "Splits"
        case .stubs: return "Stubs"
        case .workouts: return "Workouts"
        case .year(let year): return "Workouts/\(Self.padded(year, width: 4))"
        case .month(let year, let month):
            return "Workouts/\(Self.padded(year, width: 4))/\(Self.padded(month, width: 2))"
        }
    }

    package var description: String { relativePath.isEmpty ? "(root)" : relativePath }

    /// `relativePath/name`, or just `name` in the root.
    package func relativePath(of name: String) -> String {
        self == .root ? name : "\(relativePath)/\(name)"
    }

    /// The kind of document stored here, or nil for a folder that holds only folders.
    package var documentKind: DocumentKind? {
        switch self {
        case .splits: return .split
        case .stubs: return .tombstone
        case .month: return .workout
        case .root, .workouts, .year: return nil
        }
    }

    /// The layout folder a subfolder called `name` would be, or nil when the layout has no place for it.
    package func child(named name: String) -> DocumentFolder? {
        switch self {
        case .root:
            switch name {
            case "Splits": return .splits
            case "Stubs": return .stubs
            case "Workouts": return .workouts
            default: return nil
            }
        case .workouts:
            return Self.number(name, digits: 4).map { .year($0) }
        case .year(let year):
            guard let month = Self.number(name, digits: 2), (1...12).contains(month) else { return nil }
            return .month(year: year, month: month)
        case .splits, .stubs, .month:
            return nil
        }
    }

    /// The document ID a file called `name` stands for: `<ID>.json` with the ID in canonical upper-case
    /// form (the form this layout writes), nil for anything else.
    ///
    /// A lower-case name is refused rather than accepted because the writer, which derives paths from
    /// IDs, could neither overwrite nor remove it, and two files could then hold one ID.
    /// The suffix of a run's samples file (`<UUID>.samples`, next to `<UUID>.json`).
    package static let samplesSuffix = ".samples"

    /// Whether `name` is `<UUID>.samples` with the UUID in canonical upper case.
    static func isSamplesFileName(_ name: String) -> Bool {
        guard name.hasSuffix(samplesSuffix) else { return false }
        let stem = String(name.dropLast(samplesSuffix.count))
        return DocumentID(stem)?.rawValue == stem
    }

    package static func documentID(fromFileName name: String) -> DocumentID? {
        guard name.hasSuffix(".json") else { return nil }
        let stem = String(name.dropLast(5))
        guard let id = DocumentID(stem), id.rawValue == stem else { return nil }
        return id
    }

    private static func number(_ text: String, digits: Int) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count == digits, bytes.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return bytes.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    private static func padded(_ value: Int, width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

/// The three kinds of document the layout stores, one per kind of document folder.
package enum DocumentKind: Hashable, Sendable {
    case split
    case workout
    case tombstone
}
