import WorkoutModel

/// The requests a script or the benchmark sends in a loop — `status`, the set verbs and watchctl's
/// `wait` — read by hand (`JSONReader`, as documents are): `JSONDecoder` took 6–9 % of watchd's loop
/// in the round-trip benchmark, two requests an edit. Anything else, and any spelling the reader does
/// not take (an unknown or repeated key, `1.0` for an integer), is nil, and `AdminWire.decode` asks
/// `JSONDecoder`, which gives the value or the exact error. What this reads, `JSONDecoder` decodes
/// to the same command (`AdminRequestReaderTests`; the `admin-request` fuzz target holds it to that).
enum AdminRequestReader {
    /// `{"status":{}}`, `{"set":{"_0":{"complete":{…}}}}`, and `{"waitSynced":{"milliseconds":N}}`
    /// when `waits` (watchctl's): the command, or nil.
    static func read(_ bytes: UnsafeBufferPointer<UInt8>, waits: Bool) -> Common? {
        var reader = JSONReader(bytes)
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var (first, closed) = (true, false)
        guard let key = reader.nextKey(first: &first, closed: &closed) else { return nil }
        let command: Common?
        switch key {
        case "status": command = reader.emptyObject() ? .status : nil
        case "set": command = reader.setCommand().map { .set($0) }
        case "waitSynced" where waits: command = reader.waitSynced().map { .waitSynced(milliseconds: $0) }
        default: return nil
        }
        // One member only (`JSONDecoder` refuses an enum object with two), then nothing but space.
        guard let command, reader.nextKey(first: &first, closed: &closed) == nil, closed, reader.atEnd() else {
            return nil
        }
        return command
    }

    /// What `read` finds, for either daemon's command type to take.
    enum Common {
        case status
        case set(SetCommand)
        case waitSynced(milliseconds: Int)
    }
}

extension JSONReader {
    /// `{}`, as `JSONEncoder` writes a case without values.
    fileprivate mutating func emptyObject() -> Bool {
        guard take(UInt8(ascii: "{")) else { return false }
        var (first, closed) = (true, false)
        return nextKey(first: &first, closed: &closed) == nil && closed
    }

    /// `{"milliseconds":N}`.
    fileprivate mutating func waitSynced() -> Int? {
        guard take(UInt8(ascii: "{")) else { return nil }
        var (first, closed) = (true, false)
        guard let key = nextKey(first: &first, closed: &closed), case "milliseconds" = key, let value = int(),
            nextKey(first: &first, closed: &closed) == nil, closed
        else { return nil }
        return value
    }

    /// `{"_0":{"<verb>":{<fields>}}}`.
    fileprivate mutating func setCommand() -> SetCommand? {
        guard take(UInt8(ascii: "{")) else { return nil }
        var (first, closed) = (true, false)
        guard let outer = nextKey(first: &first, closed: &closed), case "_0" = outer, take(UInt8(ascii: "{"))
        else { return nil }
        var (innerFirst, innerClosed) = (true, false)
        guard let verb = nextKey(first: &innerFirst, closed: &innerClosed), let fields = setFields() else {
            return nil
        }
        guard nextKey(first: &innerFirst, closed: &innerClosed) == nil, innerClosed,
            nextKey(first: &first, closed: &closed) == nil, closed, let run = fields.run,
            let exercise = fields.exercise
        else { return nil }
        let hasValues = fields.reps != nil || fields.weight != nil
        switch verb {
        case "complete":
            guard let set = fields.set else { return nil }
            return .complete(run: run, exercise: exercise, set: set, reps: fields.reps, weight: fields.weight)
        case "undo":
            guard let set = fields.set, !hasValues else { return nil }
            return .undo(run: run, exercise: exercise, set: set)
        case "skip":
            guard fields.set == nil, !hasValues else { return nil }
            return .skip(run: run, exercise: exercise)
        case "reopen":
            guard fields.set == nil, !hasValues else { return nil }
            return .reopen(run: run, exercise: exercise)
        default:
            return nil
        }
    }

    /// A set verb's object: each known field at most once, `null` for an absent reps or weight
    /// (nil on an unknown or repeated field, or a `null` anywhere else).
    private mutating func setFields() -> (run: DocumentID?, exercise: Int?, set: Int?, reps: Int?, weight: Double?)? {
        guard take(UInt8(ascii: "{")) else { return nil }
        var fields: (run: DocumentID?, exercise: Int?, set: Int?, reps: Int?, weight: Double?) = (
            nil, nil, nil, nil, nil
        )
        var seen: Set<String> = []
        var (first, closed) = (true, false)
        while let key = nextKey(first: &first, closed: &closed) {
            let name: String
            switch key {
            case "run":
                name = "run"
                guard let value = string({ DocumentID(utf8: $0) }) else { return nil }
                fields.run = value
            case "exercise":
                name = "exercise"
                guard let value = int() else { return nil }
                fields.exercise = value
            case "set":
                name = "set"
                guard let value = int() else { return nil }
                fields.set = value
            case "reps":
                name = "reps"
                if !null() {
                    guard let value = int() else { return nil }
                    fields.reps = value
                }
            case "weight":
                name = "weight"
                if !null() {
                    guard let value = double() else { return nil }
                    fields.weight = value
                }
            default:
                return nil
            }
            guard seen.insert(name).inserted else { return nil }
        }
        return closed ? fields : nil
    }
}

extension WatchCommand {
    /// `AdminRequestReader` for watchctl's commands.
    package static func readByHand(_ bytes: UnsafeBufferPointer<UInt8>) -> WatchCommand? {
        switch AdminRequestReader.read(bytes, waits: true) {
        case .status: .status
        case .set(let command): .set(command)
        case .waitSynced(let milliseconds): .waitSynced(milliseconds: milliseconds)
        case nil: nil
        }
    }
}

extension PhoneCommand {
    /// `AdminRequestReader` for phonectl's commands.
    package static func readByHand(_ bytes: UnsafeBufferPointer<UInt8>) -> PhoneCommand? {
        switch AdminRequestReader.read(bytes, waits: false) {
        case .status: .status
        case .set(let command): .set(command)
        case .waitSynced, nil: nil
        }
    }
}
