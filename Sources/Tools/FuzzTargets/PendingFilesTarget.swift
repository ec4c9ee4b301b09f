import DurableFiles

/// `PendingFiles` opening over any record (arbitrary bytes at its path, any record in a record file,
/// or entries built from the input, hostile paths among them, each with no identity, the file's own
/// or another) and any files under its folder.
///
/// Properties: opening never writes outside its folder but for the record itself, and removes
/// nothing; a record it cannot use is reported as damage and changes no file; a file that changed
/// is one the record named whose identity matched, and holds the record's bytes; once opened (not
/// refused: a file it could not put back, in a folder that is not there, refuses with the error)
/// the record is empty, every file the record named whose identity matched holds its bytes, and
/// opening again changes nothing.
enum PendingFilesTarget {
    /// The files an input may lay out under the folder, and names a record may use.
    static let names = ["Runs/a.json", "Runs/b.json", "c.json", "Runs/new/d.json"]
    static let hostile = ["../escape.json", "Runs/../../escape.json", "/abs.json", "Runs//a.json", "", "./c.json"]

    static func check(_ input: inout FuzzInput) throws {
        try ScratchDirectory.with { scratch in
            let root = "\(scratch)/root"
            let recordPath = "\(scratch)/pending"
            try ScratchDirectory.write([], to: "\(root)/.keep")
            for name in names where input.bool() { try ScratchDirectory.write(input.chunk(), to: "\(root)/\(name)") }
            switch input.byte() % 3 {
            case 0: try ScratchDirectory.write(input.chunk(), to: recordPath)
            case 1: try RecordFile(path: recordPath).write(input.chunk())
            default: try RecordFile(path: recordPath).write(PendingFiles.record(entries(&input, root: root)))
            }
            let named = (try? RecordFile(path: recordPath).read()).flatMap { $0 }.flatMap {
                try? PendingFiles.entries($0.record)
            }
            let matched = Set(
                (named ?? [:]).filter { PendingFiles.Identity(of: "\(root)/\($0.key)") == $0.value.before }.keys)
            let before = ScratchDirectory.snapshot(scratch)
            let pending: PendingFiles
            do {
                pending = try PendingFiles(record: recordPath, root: root)
            } catch {
                try changes(before, ScratchDirectory.snapshot(scratch), named: named ?? [:], matched: matched)
                return
            }
            let after = ScratchDirectory.snapshot(scratch)
            try changes(before, after, named: named ?? [:], matched: matched)
            if let damage = pending.damage {
                try require(after == before, "a damaged record (\(damage)) changed files")
                return
            }
            for name in matched {
                try require(after["root/\(name)"] == named?[name]?.bytes, "\(name) was not put back")
            }
            let recorded = try RecordFile(path: recordPath).read().map { try PendingFiles.entries($0.record) }
            try require(recorded?.isEmpty ?? true, "the record is not empty after opening")
            let again = try PendingFiles(record: recordPath, root: root)
            try require(again.damage == nil, "an emptied record reads as damaged")
            try require(ScratchDirectory.snapshot(scratch) == after, "opening a second time changed files")
        }
    }

    /// Nothing removed, nothing written outside the folder (the record aside), and every file that
    /// changed is a named entry whose identity matched, holding its bytes.
    private static func changes(
        _ before: [String: [UInt8]], _ after: [String: [UInt8]], named: [String: PendingFiles.Entry],
        matched: Set<String>
    ) throws {
        for name in before.keys where after[name] == nil && name != "pending" {
            throw PropertyViolation(description: "opening removed \(name)")
        }
        for (name, bytes) in after where name != "pending" && before[name] != bytes {
            guard name.hasPrefix("root/") else { throw PropertyViolation(description: "opening wrote \(name)") }
            let relative = String(name.dropFirst("root/".count))
            try require(matched.contains(relative), "opening changed \(relative), which it had no cause to")
            try require(bytes == named[relative]?.bytes, "\(relative) holds other bytes than the record's")
        }
    }

    /// Up to four entries: a name (ours or hostile), no identity, the file's own, or another; bytes.
    private static func entries(_ input: inout FuzzInput, root: String) -> [String: PendingFiles.Entry] {
        var entries: [String: PendingFiles.Entry] = [:]
        for _ in 0..<(input.byte() % 5) {
            let choice = Int(input.byte())
            let all = names + hostile
            let name = all[choice % all.count]
            var before: PendingFiles.Identity?
            switch input.byte() % 3 {
            case 0: before = nil
            case 1: before = PendingFiles.Identity(of: "\(root)/\(name)")
            default:
                before = PendingFiles.Identity(
                    inode: input.integer(), modified: Int64(bitPattern: input.integer()), size: input.integer())
            }
            entries[name] = PendingFiles.Entry(bytes: input.chunk(), before: before)
        }
        return entries
    }
}
