import DurableFiles
import Foundation
import LinkProtocol
import TestSupport
import Testing
import Trace

@Suite("EventJournal")
struct EventJournalTests {
    private let instance = InstanceID(hex: "0123456789abcdef0123456789abcdef")!

    @Test("appends JSON lines stamped with side and instance; a reopened journal appends after them")
    func appendAndReopen() throws {
        let dir = try TemporaryDirectory("journal")
        let journal = EventJournal(stateDirectory: dir.path, role: .watch, instance: instance)
        journal.record(.transferQueued, cause: "xfer:q/1", run: "r1")
        journal.record(.linkUp, detail: "peer x")
        EventJournal(stateDirectory: dir.path, role: .watch, instance: instance).record(.started)
        let events = EventJournal.read(stateDirectory: dir.path)
        #expect(events.map(\.event) == [.transferQueued, .linkUp, .started])
        #expect(events.allSatisfy { $0.side == .watch && $0.instance == instance.description })
        #expect(events[0].cause == "xfer:q/1" && events[0].run == "r1")
        #expect(journal.droppedLines == 0)
    }

    @Test("past its cap the journal rotates once: at most twice the cap on disk, the newest lines kept in order")
    func rotation() throws {
        let dir = try TemporaryDirectory("journal")
        let journal = EventJournal(stateDirectory: dir.path, role: .phone, instance: instance, maximumBytes: 2_000)
        for sequence in 1...200 { journal.record(.transferSend, cause: "xfer:q/\(sequence)") }
        let current = try FileManager.default.attributesOfItem(atPath: journal.path)[.size] as! Int
        let rotated = try FileManager.default.attributesOfItem(atPath: journal.path + ".1")[.size] as! Int
        #expect(current <= 2_000 && rotated <= 2_000)
        let causes = EventJournal.read(stateDirectory: dir.path).compactMap(\.cause)
        #expect(causes.last == "xfer:q/200")
        let sequences = causes.compactMap { Int($0.split(separator: "/").last!) }
        #expect(sequences == Array(sequences.first!...200))
    }
}

@Suite("EventJournal turned off")
struct EventJournalOffTests {
    @Test("with a cap of 0 nothing is written, but events are still counted for metrics")
    func off() throws {
        let dir = try TemporaryDirectory("journal")
        let journal = EventJournal(
            stateDirectory: dir.path, role: .phone, instance: InstanceID(hex: "0123456789abcdef0123456789abcdef")!,
            maximumBytes: 0)
        journal.record(.push)
        journal.record(.push)
        journal.record(.ingest, detail: "merged")
        #expect(!FileManager.default.fileExists(atPath: journal.path))
        #expect(journal.counts == [.push: 2, .ingest: 1])
    }
}
