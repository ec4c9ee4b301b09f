import Foundation

/// What the generated libFuzzer harness of each target calls (scripts/fuzz builds one per target).
package enum FuzzHarness {
    /// `LLVMFuzzerTestOneInput`: a property that fails stops the process, which libFuzzer reports as
    /// a crash and saves the input for.
    package static func run(_ target: FuzzTarget, _ data: UnsafePointer<UInt8>?, _ size: Int) {
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        do {
            try target.check(bytes)
        } catch {
            fatalError("\(target.rawValue): \(error)")
        }
    }

    /// `LLVMFuzzerInitialize`: with WATCHSYNC_FUZZ_SEEDS set to a directory, writes the target's seeds
    /// there and exits, so the script can start an empty corpus from them.
    package static func initialize(_ target: FuzzTarget) {
        guard let directory = ProcessInfo.processInfo.environment["WATCHSYNC_FUZZ_SEEDS"] else { return }
        for (index, seed) in FuzzSeeds.inputs(for: target).enumerated() {
            _ = FileManager.default.createFile(atPath: "\(directory)/seed-\(index)", contents: Data(seed))
        }
        exit(0)
    }
}
