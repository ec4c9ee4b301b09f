import FoundationEssentials

/// The heart-rate series a workout session records, as the watch exports it (`watchctl export RUN`):
/// a file the watch sends with `transferFile` and the phone keeps next to the run's document as
/// `Workouts/YYYY/MM/<id>.samples`.
///
/// The file is CSV text, one sample a line: `<milliseconds since the start>,<beats per minute>\n`,
/// four samples a second. The model has no sensor, so the series is generated: a random walk
/// between 70 and 185 bpm seeded by the run's ID, so one run always exports the same bytes.
package enum WorkoutSamples {
    /// Samples in one export: 80 minutes at 4 Hz, about 290 KB.
    package static let count = 19_200

    /// The series for `runID`.
    package static func series(for runID: DocumentID, count: Int = count) -> [UInt8] {
        var state: UInt64 = runID.rawValue.utf8.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
        var bpm = 95
        var text: [UInt8] = []
        text.reserveCapacity(count * 15)
        for index in 0..<count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bpm = min(185, max(70, bpm + Int(state >> 62) - 1))
            text += Array("\(index * 250),\(bpm)\n".utf8)
        }
        return text
    }
}

/// The metadata of an exported samples file (`transferFile`'s metadata dictionary):
/// `{"kind":"workoutSamples","runID":"…","samples":19200,"schemaVersion":1}`.
package struct WorkoutSamplesMetadata: VersionedDocument {
    package static let currentSchemaVersion = 1

    package var schemaVersion: Int
    package var kind: String
    package var runID: DocumentID
    package var samples: Int

    package init(runID: DocumentID, samples: Int) {
        schemaVersion = Self.currentSchemaVersion
        kind = "workoutSamples"
        self.runID = runID
        self.samples = samples
    }

    package func validate() throws(DocumentError) {
        guard kind == "workoutSamples" else {
            throw .malformed(
                type: "WorkoutSamplesMetadata", field: "kind", reason: "expected workoutSamples, found \(kind)")
        }
    }
}

/// `transferFile`'s metadata is plist-like: a JSON object whose values are strings, numbers or
/// booleans (WatchConnectivity refuses anything else with `payloadUnsupportedTypes`).
package enum FileMetadata {
    /// Nil when `text` is such an object; otherwise why not.
    package static func refusal(_ text: String) -> String? {
        struct Scalar: Decodable {
            init(from decoder: any Decoder) throws {
                let value = try decoder.singleValueContainer()
                if (try? value.decode(Bool.self)) != nil || (try? value.decode(Double.self)) != nil
                    || (try? value.decode(String.self)) != nil
                {
                    return
                }
                throw DecodingError.dataCorruptedError(in: value, debugDescription: "not a string, number or boolean")
            }
        }
        do {
            _ = try JSONDecoder().decode([String: Scalar].self, from: Data(text.utf8))
            return nil
        } catch {
            return "metadata must be a JSON object of strings, numbers and booleans"
        }
    }
}
