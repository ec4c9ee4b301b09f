import Foundation
import LiveMirror
import Testing
import WorkoutModel

@Suite("LiveProgress ordering and wire format")
struct LiveProgressTests {
    @Test("isNewer compares the version first, whatever the anchors say")
    func versionFirst() {
        let older = squat(.rest, anchor: at(100), version: 4)
        let newer = squat(.ready, anchor: at(1), version: 5)
        #expect(LiveProgress.isNewer(newer, than: older))
        #expect(!LiveProgress.isNewer(older, than: newer))
    }

    @Test("an equal version breaks the tie on the anchor: the later human action wins")
    func anchorBreaksTies() {
        let earlier = squat(.rest, anchor: atMs(20_000), version: 6)
        let later = squat(.work, anchor: atMs(20_001), version: 6)
        #expect(LiveProgress.isNewer(later, than: earlier))
        #expect(!LiveProgress.isNewer(earlier, than: later))
    }

    @Test("equal version and anchor is not newer either way")
    func equalIsNotNewer() {
        let a = squat(.work, anchor: at(5), version: 3)
        let b = squat(.rest, anchor: at(5), version: 3)
        #expect(!LiveProgress.isNewer(a, than: b))
        #expect(!LiveProgress.isNewer(b, than: a))
        #expect(!LiveMessage.progress(a).isNewer(than: .ended(LiveEnded(runID: id(100), version: 3, anchor: at(5)))))
    }

    @Test("a progress frame is compact sorted JSON and round-trips with its microseconds")
    func progressJSON() throws {
        let frame = squat(.rest, set: 1, anchor: Timestamp(iso8601: "2026-11-29T12:00:05.250123Z")!, version: 8)
        let bytes = LiveMessage.progress(frame).encoded()
        let json = String(decoding: bytes, as: UTF8.self)
        #expect(
            json == #"{"kind":"progress","progress":{"anchor":"2026-11-29T12:00:05.250123Z","countdownSeconds":5,"#
                + #""exerciseName":"Squat","logID":"\#(frame.logID)","phase":"rest","restSeconds":90,"#
                + #""runID":"\#(frame.runID)","setCount":3,"setIndex":1,"version":8},"schemaVersion":1}"#)
        let decoded = try LiveMessage.decode(bytes)
        #expect(decoded == .progress(frame))
        #expect(progress(decoded)?.anchor.microsecondsSinceEpoch == frame.anchor.microsecondsSinceEpoch)
    }

    @Test("a liveEnded marker is compact sorted JSON and round-trips")
    func endedJSON() throws {
        let marker = LiveEnded(runID: id(100), version: 9, anchor: Timestamp(iso8601: "2026-11-29T12:09:00.000007Z")!)
        let bytes = LiveMessage.ended(marker).encoded()
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"ended":{"anchor":"2026-11-29T12:09:00.000007Z","runID":"\#(id(100))","version":9},"#
                + #""kind":"ended","schemaVersion":1}"#)
        #expect(try LiveMessage.decode(bytes) == .ended(marker))
    }

    @Test("an unknown schema version or an impossible frame is refused")
    func refusesBadFrames() {
        let good = String(decoding: LiveMessage.progress(squat(.work, version: 1)).encoded(), as: UTF8.self)
        let future = good.replacingOccurrences(of: #""schemaVersion":1"#, with: #""schemaVersion":2"#)
        #expect(throws: DocumentError.unsupportedSchemaVersion(type: "LiveMessage", found: 2, supported: 1)) {
            try LiveMessage.decode(Array(future.utf8))
        }
        let restAfterLast = LiveMessage.progress(squat(.rest, set: 2, version: 1)).encoded()
        #expect(
            throws: DocumentError.malformed(
                type: "LiveMessage", field: "progress.phase", reason: "no rest after the last set")
        ) { try LiveMessage.decode(restAfterLast) }
        let outOfRange = LiveMessage.progress(squat(.work, set: 3, version: 1)).encoded()
        #expect(throws: DocumentError.self) { try LiveMessage.decode(outOfRange) }
        #expect(throws: DocumentError.self) { try LiveMessage.decode(Array("not json".utf8)) }
    }
}
