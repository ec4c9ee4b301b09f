import Foundation
import TestSupport
import Testing
import WorkoutModel

@Suite("Strict, typed decoding")
struct DecodingTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("every document type round-trips through the disk and wire encodings")
    func roundTrips() throws {
        var run = try startedRun()
        try run.completeSet(logID: run.logs[0].id, setIndex: 0, reps: 5, weight: 102.5, at: at(1))
        try run.pause(at: at(2))
        #expect(try DocumentCoder.decode(WorkoutDocument.self, from: DocumentCoder.encodeForDisk(run)) == run)
        #expect(try DocumentCoder.decode(WorkoutDocument.self, from: DocumentCoder.encodeCompact(run)) == run)
        let split = twoExerciseSplit()
        #expect(try DocumentCoder.decode(SplitDocument.self, from: DocumentCoder.encodeForDisk(split)) == split)
        let stub = Tombstone(id: id(5), kind: .workout, deletedAt: at(3))
        #expect(try DocumentCoder.decode(Tombstone.self, from: DocumentCoder.encodeForDisk(stub)) == stub)
        let settings = Settings(restSeconds: 60, doneCountdownSeconds: 3, weightUnit: .pounds)
        #expect(try DocumentCoder.decode(Settings.self, from: DocumentCoder.encodeForDisk(settings)) == settings)
    }

    @Test("an unknown schema version is refused as such")
    func unknownSchemaVersion() {
        let text = #"{"schemaVersion": 3, "id": "not even checked"}"#
        #expect(throws: DocumentError.unsupportedSchemaVersion(type: "WorkoutDocument", found: 3, supported: 2)) {
            try DocumentCoder.decode(WorkoutDocument.self, from: bytes(text))
        }
        #expect(throws: DocumentError.malformed(type: "Tombstone", field: "schemaVersion", reason: "missing")) {
            try DocumentCoder.decode(Tombstone.self, from: bytes(#"{"id": "x"}"#))
        }
    }

    @Test("a malformed field is named by its path")
    func namesTheField() throws {
        var json = String(decoding: DocumentCoder.encodeCompact(try startedRun()), as: UTF8.self)
        json = json.replacingOccurrences(of: #""targetReps":5"#, with: #""targetReps":"five""#)
        do {
            _ = try DocumentCoder.decode(WorkoutDocument.self, from: bytes(json))
            Issue.record("decoded a malformed document")
        } catch {
            guard case .malformed(_, let field, _) = error else { throw error }
            #expect(field == "logs[0].targetReps")
        }
    }

    @Test("a missing required field is named, not defaulted")
    func missingField() {
        let text = #"{"schemaVersion": 1, "id": "3F2504E0-4F89-11D3-9A0C-0305E82C3301", "kind": "workout"}"#
        #expect(throws: DocumentError.malformed(type: "Tombstone", field: "deletedAt", reason: "missing")) {
            try DocumentCoder.decode(Tombstone.self, from: bytes(text))
        }
    }

    @Test("bytes that are not JSON are refused without a crash", arguments: ["", "{", "garbage", "\u{0}\u{1}"])
    func notJSON(text: String) {
        #expect(throws: DocumentError.self) { try DocumentCoder.decode(Settings.self, from: bytes(text)) }
    }

    @Test("derived fields are recomputed from the registers, never trusted; semantic checks refuse bad values")
    func validation() throws {
        var run = try startedRun()
        run.endedAt = at(5)
        run.status = .completed
        #expect(try DocumentCoder.decode(WorkoutDocument.self, from: DocumentCoder.encodeCompact(run)) == startedRun())
        var negative = try startedRun()
        negative.logs[0].sets[0].reps = -1
        #expect(
            throws: DocumentError.malformed(
                type: "WorkoutDocument", field: "logs[0].sets[0].reps", reason: "must not be negative")
        ) { try DocumentCoder.decode(WorkoutDocument.self, from: DocumentCoder.encodeCompact(negative)) }
        let bad = Settings(restSeconds: -1)
        #expect(throws: DocumentError.self) {
            try DocumentCoder.decode(Settings.self, from: DocumentCoder.encodeCompact(bad))
        }
    }

    /// `watchctl complete RUN 1 1 --weight 1e308` was accepted: finishing that run made its volume
    /// infinite, which JSON cannot encode, and watchd died in `DocumentCoder.encode`; phoned died
    /// showing the run (`Int(1e308)`). An edit's weight is now bounded; a document already holding
    /// such a weight still loads, and its metrics still encode.
    @Test("an edit's weight past the bound is refused; a run already that heavy loads and its metrics encode")
    func weightBound() throws {
        var run = try startedRun()
        #expect(throws: MutationError.invalidValue(field: "weight", reason: SetRecord.weightRule)) {
            try run.completeSet(logID: run.logs[0].id, setIndex: 0, reps: 5, weight: 1e308, at: at(1))
        }
        #expect(throws: MutationError.self) {
            try run.completeSet(
                logID: run.logs[0].id, setIndex: 0, reps: 5, weight: SetRecord.maximumWeight.nextUp, at: at(1))
        }
        try run.completeSet(logID: run.logs[0].id, setIndex: 0, reps: .max, weight: SetRecord.maximumWeight, at: at(1))

        var heavy = try startedRun()
        for logIndex in heavy.logs.indices {
            for setIndex in heavy.logs[logIndex].sets.indices {
                let stamp = heavy.logs[logIndex].sets[setIndex].stamp
                heavy.logs[logIndex].sets[setIndex] = SetRecord(
                    reps: .max, weight: .greatestFiniteMagnitude, completedAt: at(2), stamp: stamp)
            }
        }
        heavy = try DocumentCoder.decode(WorkoutDocument.self, from: DocumentCoder.encodeCompact(heavy))
        heavy.metrics = heavy.sessionMetrics(recordedAt: at(3))
        #expect(heavy.metrics?.totalVolume == .greatestFiniteMagnitude)
        #expect(try DocumentCoder.decode(WorkoutDocument.self, from: DocumentCoder.encodeCompact(heavy)) == heavy)
    }

    @Test(
        "document IDs must be UUIDs; path-like IDs are refused",
        arguments: [
            "../../etc/passwd", "a/b", ".", "", "3F2504E0-4F89-11D3-9A0C-0305E82C330",
            "3F2504E0/4F89-11D3-9A0C-0305E82C3301",
            "3F2504E0-4F89-11D3-9A0C-0305E82C330G", "3F2504E0-4F89-11D3-9A0C-0305E82C3301.json",
            "3F2504E0-4F89-11D3-9A0C-0305E82C33\u{0}1",
        ])
    func pathLikeIDs(text: String) {
        #expect(DocumentID(text) == nil)
        let json = #"{"schemaVersion":1,"id":"\#(text)","kind":"split","deletedAt":"2026-11-29T12:00:00Z"}"#
        #expect(throws: DocumentError.self) { try DocumentCoder.decode(Tombstone.self, from: bytes(json)) }
    }

    @Test("IDs are case-insensitive on input and canonical upper-case after")
    func canonicalIDs() throws {
        let lower = try #require(DocumentID("3f2504e0-4f89-11d3-9a0c-0305e82c3301"))
        #expect(lower.rawValue == "3F2504E0-4F89-11D3-9A0C-0305E82C3301")
        #expect(lower == DocumentID("3F2504E0-4F89-11D3-9A0C-0305E82C3301"))
    }
}
