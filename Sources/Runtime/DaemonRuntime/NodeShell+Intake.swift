import LinkRuntime
import POSIX

/// The directories what the link brings is written to (the state directory; watchd's cache too),
/// and which of them were read-only when last looked at (`statvfs`, about a microsecond each).
struct IntakeDirectories {
    let directories: [(name: String, path: String)]
    private(set) var readOnly: [String] = []
    /// Set while a look again is scheduled.
    var timer: TimerID?

    init(_ directories: [(name: String, path: String)]) { self.directories = directories }

    /// Looks again; the directories now read-only, named, when that changed.
    mutating func look() -> [String]? {
        let now = Self.readOnly(directories)
        guard now != readOnly else { return nil }
        readOnly = now
        return now
    }

    /// Those of `directories` on a read-only file system now, named (`the cache directory /srv/c`).
    static func readOnly(_ directories: [(name: String, path: String)]) -> [String] {
        directories.filter { FileSystem.isReadOnly($0.path) }.map { "the \($0.name) \($0.path)" }
    }
}

extension NodeShell {
    /// Holds the link while a directory it writes to is read-only (a remount by an administrator or
    /// the kernel), so nothing is taken that cannot be written, and lets it go once all are writable
    /// again, with no restart. Called as bytes arrive, and every 500 ms while held.
    func checkIntakeWritable() {
        if let readOnly = intake.look() {
            if readOnly.isEmpty {
                logger.notice("link taken again: its directories are writable", component: "link")
            } else {
                logger.warning(
                    "link held: a directory it writes to is on a read-only file system",
                    [
                        "directories": readOnly.joined(separator: ", "),
                        "then": "nothing from the peer is taken until it is writable",
                    ],
                    component: "link")
            }
            runner.holdLink(!readOnly.isEmpty)
        }
        guard !intake.readOnly.isEmpty, intake.timer == nil else { return }
        intake.timer = loop.scheduleTimer(after: .milliseconds(500)) { [unowned self] in
            intake.timer = nil
            checkIntakeWritable()
        }
    }
}
