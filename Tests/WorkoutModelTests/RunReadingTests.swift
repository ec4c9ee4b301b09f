import Foundation
import LinkProtocol
import Testing
import WorkoutModel

/// `JSONReader` reads runs and workout updates without `JSONDecoder`. Whatever it reads, `JSONDecoder`
/// must read to an equal value; whatever it gives up on goes to `JSONDecoder`, so the daemons' own
/// encodings must not be among those, or the speed is lost.
@Suite("Runs read by hand")
struct RunReadingTests {
    /// The reference: `JSONDecoder` itself, as `DocumentCoder` used it before the reader.
    static func reference(_ bytes: [UInt8]) -> WorkoutDocument? {
        try? JSONDecoder().decode(WorkoutDocument.self, from: Data(bytes))
    }

    static func referenceMessage(_ bytes: [UInt8]) -> WatchToPhoneMessage? {
        try? JSONDecoder().decode(WatchToPhoneMessage.self, from: Data(bytes))
    }

    static func runs(count: Int, seed: UInt64) throws -> [WorkoutDocument] {
        var random = SplitMix64(seed: seed)
        return try (0..<count).map { n in
            let split = ContextCodingTests.randomSplit(&random, n: n)
            return try ContextCodingTests.randomRun(&random, of: split, n: 1_000 + n)
        }
    }

    @Test("the daemons' own encodings of 400 random runs are read by hand, to the value JSONDecoder gives")
    func ownEncodings() throws {
        var readByHand = 0
        for run in try Self.runs(count: 400, seed: 41) {
            for bytes in [DocumentCoder.encodeForDisk(run), DocumentCoder.encodeCompact(run)] {
                let read = WorkoutDocument.read(bytes)
                #expect(read == run)
                #expect(read == Self.reference(bytes))
                if read != nil { readByHand += 1 }
                #expect(try DocumentCoder.decode(WorkoutDocument.self, from: bytes) == run)
            }
        }
        #expect(readByHand == 800)
    }

    @Test("workout updates are read by hand, epoch or not; a sync request is left to JSONDecoder")
    func messages() throws {
        for (index, run) in try Self.runs(count: 60, seed: 7).enumerated() {
            let message = WatchToPhoneMessage.workoutUpdate(run, epoch: index % 2 == 0 ? nil : at(index))
            let bytes = message.encoded()
            #expect(WatchToPhoneMessage.read(bytes) == message)
            #expect(Self.referenceMessage(bytes) == message)
            var spaced = String(decoding: bytes, as: UTF8.self)
            spaced = spaced.replacingOccurrences(of: #""epoch":"#, with: #" "epoch" :  "#)
            spaced = spaced.replacingOccurrences(of: #"{"kind""#, with: #"{ "other": [1, {"x": null}], "kind""#)
            #expect(WatchToPhoneMessage.read(Array(spaced.utf8)) == message)
            #expect(Self.referenceMessage(Array(spaced.utf8)) == message)
        }
        #expect(WatchToPhoneMessage.read(WatchToPhoneMessage.requestSync.encoded()) == nil)
        let nullEpoch = #"{"epoch":null,"kind":"workoutUpdate","schemaVersion":1,"workout":"#
        let run = try Self.runs(count: 1, seed: 8)[0]
        let bytes = Array(nullEpoch.utf8) + DocumentCoder.encodeCompact(run) + Array("}".utf8)
        #expect(WatchToPhoneMessage.read(bytes) == .workoutUpdate(run, epoch: nil))
        #expect(Self.referenceMessage(bytes) == .workoutUpdate(run, epoch: nil))
        for refused in [
            #"{"kind":"workoutUpdate","schemaVersion":2,"workout":"#, #"{"kind":"other","schemaVersion":1,"workout":"#,
            #"{"kind":"workoutUpdate","kind":"workoutUpdate","schemaVersion":1,"workout":"#,
        ] {
            #expect(WatchToPhoneMessage.read(Array(refused.utf8) + DocumentCoder.encodeCompact(run) + [0x7D]) == nil)
        }
    }

    /// Text edits that keep JSON valid, or nearly, each one a case the reader must read as JSONDecoder
    /// does or give up on.
    static let edits: [(String, String)] = [
        (#""reps":"#, #""reps":null,"reps":"#), (#""id":"#, #""unknown":{"a":[true,false,null,-1.5e3]},"id":"#),
        (#""targetReps":"#, #""targetReps":1.0,"x":"#), (#""targetWeight":"#, #""targetWeight":1e400,"y":"#),
        (#""targetWeight":"#, #""targetWeight":-0,"z":"#), (#""schemaVersion":2"#, #""schemaVersion":1"#),
        (#""schemaVersion":2"#, #""schemaVersion":2.0"#), (#""schemaVersion":2"#, #""schemaVersion":3"#),
        (#""pausesStamp":"#, #""other":"\u0041","pausesStamp":"#), (#""ending":{"#, #""ending":{"at":null,"#),
        (#""stamp":"#, #""stamp":5,"q":"#), (#"\/"#, "/"), (#""logs":["#, #""logs":[ "#), ("}", "} "),
        (#""resolution":"#, #""resolution":"nope","r":"#),
        (#""targetReps":"#, #""targetReps":9223372036854775808,"s":"#),
        (#""targetReps":"#, #""targetReps":-9223372036854775808,"s":"#), (#""weight":"#, #""weight":0.1e1,"w":"#),
        (#""weight":"#, #""weight":12345678901234567,"w":"#), (#""weight":"#, #""weight":01,"w":"#),
        (#""metricsStamp":"#, #""metricsStamp":null,"m":"#), (#""splitName":""#, #""splitName":"é\t"#),
        (#""id":""#, #""id":"\"#), ("[]", "[  ]"), (#""splitName":""#, #""splitName":"\ud83d\udcaa"#),
        (#""splitName":""#, #""splitName":"\u00e9\u0000\u001F"#), (#""mark":"#, #""mark":"reopened","mk":"#),
    ]

    @Test("edited encodings: whatever the reader reads, JSONDecoder reads to the same value")
    func editedEncodings() throws {
        var random = SplitMix64(seed: 99)
        var (readByHand, refused) = (0, 0)
        for run in try Self.runs(count: 120, seed: 5) {
            let text = String(decoding: DocumentCoder.encodeCompact(run), as: UTF8.self)
            var variants = Self.edits.map { text.replacingOccurrences(of: $0.0, with: $0.1) }
            variants.append(String(decoding: DocumentCoder.encodeForDisk(run), as: UTF8.self))
            let bytes = Array(text.utf8)
            for _ in 0..<20 {
                var changed = bytes
                let position = Int.random(in: 0..<changed.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: changed[position] = UInt8.random(in: 0...255, using: &random)
                case 1: changed.remove(at: position)
                case 2: changed.insert(Array(" \n\t\r,:[]{}\"\\0-e.".utf8).randomElement(using: &random)!, at: position)
                default: changed = Array(changed.prefix(position))
                }
                variants.append(String(decoding: changed, as: UTF8.self))
            }
            for variant in variants {
                let bytes = Array(variant.utf8)
                guard let read = WorkoutDocument.read(bytes) else {
                    refused += 1
                    continue
                }
                readByHand += 1
                #expect(read == Self.reference(bytes), "\(variant)")
            }
        }
        #expect(readByHand > 1_000)
        #expect(refused > 1_000)
    }

    @Test("numbers: correctly rounded, as JSONDecoder gives them")
    func numbers() throws {
        let run = try Self.runs(count: 1, seed: 3)[0]
        let text = String(decoding: DocumentCoder.encodeCompact(run), as: UTF8.self)
        let weight = try #require(text.firstRange(of: #""targetWeight":"#))
        let end = try #require(text[weight.upperBound...].firstIndex(of: ","))
        var random = SplitMix64(seed: 12)
        var spellings = [
            "0", "0.0", "1", "0.1", "0.3", "99999.789", "1e-7", "1E+2", "2.5e-3", "123456789012345",
            "1234567890123456", "0.000000000000001", "4.35", "5e-324", "1.7976931348623157e308", "-0.0", "-2.5",
        ]
        for _ in 0..<500 {
            let digits = (0..<Int.random(in: 1...18, using: &random)).map { _ in
                String(Int.random(in: 0...9, using: &random))
            }.joined()
            let point = Int.random(in: 0...digits.count, using: &random)
            var spelled = String(digits.prefix(point)) + "." + String(digits.dropFirst(point))
            if spelled.hasPrefix(".") { spelled = "0" + spelled }
            if spelled.hasSuffix(".") { spelled += "0" }
            spellings.append(spelled.hasPrefix("0") && !spelled.hasPrefix("0.") ? "1" + spelled : spelled)
        }
        for spelling in spellings {
            var changed = text
            changed.replaceSubrange(weight.upperBound..<end, with: spelling)
            let bytes = Array(changed.utf8)
            guard let reference = Self.reference(bytes) else { continue }
            let read = try #require(WorkoutDocument.read(bytes), "\(spelling)")
            #expect(read.logs[0].targetWeight.bitPattern == reference.logs[0].targetWeight.bitPattern, "\(spelling)")
        }
    }
}
