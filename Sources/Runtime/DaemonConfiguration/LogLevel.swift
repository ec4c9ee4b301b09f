/// How much a log line matters, lowest first; a logger drops lines below its minimum level.
package enum LogLevel: String, CaseIterable, Comparable, Sendable {
    case debug, info, notice, warning, error

    private var rank: Int { Self.allCases.firstIndex(of: self)! }

    package static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }
}
