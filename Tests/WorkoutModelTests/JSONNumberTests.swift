import Foundation
import Testing
import WorkoutModel

@Suite("A number written by hand is JSONEncoder's")
struct JSONNumberTests {
    @Test("milliseconds waited, weights and edge values, over 3,000 numbers")
    func matchesJSONEncoder() throws {
        var random = SystemRandomNumberGenerator()
        var values: [Double] = [0, -0.0, 1, 100, 0.5, 1e-7, 1e21, 1e22, 5e-324, .greatestFiniteMagnitude, 123.456]
        for _ in 0..<1_000 {
            values.append(Double(Int.random(in: 0...10_000_000, using: &random)) / 1000)
            values.append(Double.random(in: -1e6...1e6, using: &random))
            values.append(Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &random) & ~(0x7FF << 52)))
        }
        for value in values where value.isFinite {
            let encoded = String(decoding: try JSONEncoder().encode([value]), as: UTF8.self)
            #expect("[\(DocumentJSONWriter.number(value))]" == encoded, "\(value)")
        }
    }
}
