import DurableFiles
import LinkProtocol
import LinkRuntime

/// `LinkStateDirectory` over any state files: instance ID, peer, context slot, received context and
/// transfer marks, each absent, valid, raw or with a correct checksum over arbitrary contents (the two
/// contexts also as `RecordFile` halves, one byte perhaps flipped).
///
/// Properties: start-up either restores or refuses with a `StateFileError` naming the file, and a
/// refusal changes no file (but for a damaged received context, set aside whole); whatever was restored, written back and read again, is the same state.
enum StateFilesTarget {
    static func check(_ input: inout FuzzInput) throws {
        try ScratchDirectory.with { root in
            try writeFiles(&input, into: root)
            let before = ScratchDirectory.snapshot(root)
            let restored: RestoredLinkState
            let instance: InstanceID
            do {
                let state = try LinkStateDirectory(root: root) { [UInt8](repeating: 0x44, count: 16) }
                restored = try state.restore()
                instance = state.instance
                if let peer = restored.knownPeer { try state.persistPeer(peer) }
                if let slot = restored.contextSlot { try state.persist(slot) }
                if let received = restored.receivedContext { try state.persist(received) }
            } catch let error as StateFileError {
                guard case .malformed(let file, _) = error, file.hasPrefix(root) else {
                    throw PropertyViolation(description: "a state file error that names no file: \(error)")
                }
                // The outbox and the instance ID may be created before the bad file is reached, and a
                // damaged received context set aside whole (renamed `.damaged`); nothing else.
                let all = ScratchDirectory.snapshot(root)
                let after = all.filter { before[$0.key] != nil }
                var expected = before
                let received = "link/received-context"
                if after[received] == nil, let original = before[received], all["\(received).damaged"] == original {
                    expected[received] = nil
                }
                try require(after == expected, "a refused start-up changed files: \(error)")
                return
            }
            let again = try LinkStateDirectory(root: root) { [UInt8](repeating: 0x55, count: 16) }
            try require(again.instance == instance, "the instance ID changed across a restart")
            try require(try again.restore() == restored, "the state read back differs from what was restored")
        }
    }

    private static func writeFiles(_ input: inout FuzzInput, into root: String) throws {
        let flags = input.integer(UInt16.self)
        func identity(_ present: UInt16, _ valid: UInt16, _ path: String) throws {
            guard flags & present != 0 else { return }
            let text = flags & valid != 0 ? Array("\(InstanceID(bytes: input.fixed(16))!)\n".utf8) : input.chunk()
            try ScratchDirectory.write(text, to: "\(root)/\(path)")
        }
        func sealed(_ present: UInt16, _ seal: UInt16, _ body: [UInt8], _ path: String) throws {
            guard flags & present != 0 else { return }
            var bytes = body
            if flags & seal != 0 { Bytes.append(CRC32C.checksum(body), to: &bytes) }
            try ScratchDirectory.write(bytes, to: "\(root)/\(path)")
        }
        try identity(1, 2, "instance-id")
        try identity(4, 8, "link/peer")
        /// Two records in RecordFile halves, in either order, one byte of the file perhaps flipped.
        func halves(_ present: UInt16, _ path: String) throws {
            guard flags & present != 0 else { return }
            let page = RecordFile.pageBytes
            var bytes: [UInt8] = []
            for _ in 0..<2 {
                let half = RecordFile.half(input.chunk(), sequence: UInt64(input.byte() % 4))
                bytes += half.prefix(page) + [UInt8](repeating: 0, count: max(0, page - half.count))
            }
            let flip = Int(input.integer(UInt16.self)) % (2 * page + 1)
            if flip < bytes.count { bytes[flip] ^= 0x01 }
            try ScratchDirectory.write(bytes, to: "\(root)/\(path)")
        }
        if flags & 0x800 != 0 {
            try halves(16, "link/context-slot")
            try halves(64, "link/received-context")
        } else {
            try sealed(16, 32, input.chunk(), "link/context-slot")
            try sealed(64, 128, input.chunk(), "link/received-context")
        }
        var marks: [UInt8] = []
        if flags & 0x400 != 0 {
            marks = input.chunk()
        } else {
            let count = Int(input.byte() % 4)
            Bytes.append(UInt32(count), to: &marks)
            for _ in 0..<count {
                let queue = input.bytes(Int(input.byte() % 20))
                marks.append(UInt8(queue.count))
                marks += queue
                Bytes.append(input.integer(UInt64.self), to: &marks)
            }
        }
        try sealed(0x100, 0x200, marks, "link/transfer-marks")
    }
}
