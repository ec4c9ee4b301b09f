import TestSupport
import Testing
import WorkoutModel

@Suite("Timestamp and EditStamper")
struct TimestampTests {
    @Test(
        "formats and parses the canonical ISO-8601 form",
        arguments: [
            ("1970-01-01T00:00:00.000000Z", Int64(0)),
            ("2026-11-29T12:00:00.000000Z", Int64(1_795_953_600_000_000)),
            ("2024-02-29T23:59:59.999999Z", Int64(1_709_251_199_999_999)),
            ("1969-12-31T23:59:59.999999Z", Int64(-1)),
        ])
    func canonicalForm(text: String, micros: Int64) throws {
        let parsed = try #require(Timestamp(iso8601: text))
        #expect(parsed.microsecondsSinceEpoch == micros)
        #expect(parsed.iso8601 == text)
    }

    @Test("accepts 0-6 fractional digits and scales them")
    func fractionalDigits() {
        #expect(Timestamp(iso8601: "2026-11-29T12:00:00Z") == t0)
        #expect(Timestamp(iso8601: "2026-11-29T12:00:00.5Z") == t0.advanced(by: .milliseconds(500)))
        #expect(Timestamp(iso8601: "2026-11-29T12:00:00.001Z") == t0.advanced(by: .milliseconds(1)))
    }

    @Test(
        "refuses malformed text",
        arguments: [
            "", "2026-11-29", "2026-11-29T12:00:00", "2026-11-29T12:00:00+01:00", "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z", "2026-11-29T24:00:00Z", "2026-11-29T12:00:00.1234567Z", "2026-11-29T12:00:00.Z",
            "2026-11-29T12:00:00ZZ", "2026-11-29 12:00:00Z",
        ])
    func refusesMalformed(text: String) {
        #expect(Timestamp(iso8601: text) == nil)
    }

    @Test("every second of a leap year's days round-trips through year and month")
    func yearAndMonth() {
        let march1 = Timestamp(iso8601: "2024-03-01T00:00:00Z")!
        #expect(march1.yearAndMonth == (2024, 3))
        #expect(march1.advanced(by: .microseconds(-1)).yearAndMonth == (2024, 2))
        #expect(Timestamp(iso8601: "2000-12-31T23:59:59Z")!.yearAndMonth == (2000, 12))
    }

    @Test("a writer's stamps strictly increase even when the clock stands still or goes back")
    func stamperStrictlyIncreases() {
        var stamper = EditStamper()
        let first = stamper.stamp(at: t0)
        let second = stamper.stamp(at: t0)
        let third = stamper.stamp(at: t0.advanced(by: .seconds(-5)))
        #expect(first == t0)
        #expect(second > first)
        #expect(third > second)
        #expect(stamper.stamp(at: at(10)) == at(10))
    }

    @Test("observing a newer stamp moves the next stamp past it")
    func stamperObserves() {
        var stamper = EditStamper()
        stamper.observe(at(60))
        #expect(stamper.stamp(at: t0) > at(60))
    }

    @Test("an edit 1 ms after another survives the document coder as strictly newer")
    func oneMillisecondEditSurvivesRoundTrip() throws {
        var stamper = EditStamper()
        var run = try startedRun(at: stamper.stamp(at: t0))
        let logID = run.logs[0].id
        try run.completeSet(logID: logID, setIndex: 0, reps: 5, weight: 100, at: stamper.stamp(at: at(1)))
        let before = try DocumentCoder.decode(WorkoutDocument.self, from: DocumentCoder.encodeForDisk(run))
        try run.completeSet(
            logID: logID, setIndex: 1, reps: 5, weight: 100, at: stamper.stamp(at: at(1).advanced(by: .milliseconds(1)))
        )
        let after = try DocumentCoder.decode(WorkoutDocument.self, from: DocumentCoder.encodeForDisk(run))
        #expect(after.updatedAt > before.updatedAt)
        #expect(after.updatedAt == run.updatedAt)
        #expect(after == run)
    }

    @Test("two edits within the same microsecond of clock time still differ after the round trip")
    func sameInstantEditsStayDistinct() throws {
        var stamper = EditStamper()
        var run = try startedRun(at: stamper.stamp(at: t0))
        try run.pause(at: stamper.stamp(at: at(1)))
        let paused = try DocumentCoder.decode(WorkoutDocument.self, from: DocumentCoder.encodeForDisk(run))
        try run.resume(at: stamper.stamp(at: at(1)))
        let resumed = try DocumentCoder.decode(WorkoutDocument.self, from: DocumentCoder.encodeForDisk(run))
        #expect(resumed.updatedAt > paused.updatedAt)
    }
}
