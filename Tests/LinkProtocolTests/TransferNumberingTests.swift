import Testing

@testable import LinkProtocol

/// The engine issues each transfer's sequence (the outbox log only checks it is the one it holds
/// next): in call order, from the restored log's next sequence, per queue, and again after a failed
/// append.
@Suite("The link engine numbers transfers")
struct TransferNumberingTests {
    static let complicationQueue = InstanceID(bytes: [UInt8](repeating: 0xC0, count: 16))!

    static func engine(next: UInt64 = 7, complications: Bool = true) -> LinkEngine {
        LinkEngine(
            configuration: LinkConfiguration(role: .phone), instance: LinkPair.phoneInstance,
            authenticator: FakeAuthenticator(key: HandshakeSamples.key),
            restored: RestoredLinkState(
                outboxQueue: LinkPair.phoneQueue, pendingTransfers: [(sequence: next - 1, payload: [0])],
                nextOutboxSequence: next, complicationQueue: complications ? complicationQueue : nil,
                nextComplicationSequence: 3),
            seed: 1)
    }

    static func request(_ engine: inout LinkEngine, _ payload: [UInt8], complication: Bool = false) -> [LinkEngine
        .Action]
    {
        engine.handle(.transferRequested(payload: payload, complication: complication))
    }

    @Test(
        "requests are numbered in call order from the restored next sequence, each queue on its own: the append is the only action"
    )
    func callOrder() {
        var engine = Self.engine()
        #expect(Self.request(&engine, [1]) == [.appendTransfer(sequence: 7, payload: [1], complication: false)])
        #expect(Self.request(&engine, [2]) == [.appendTransfer(sequence: 8, payload: [2], complication: false)])
        #expect(
            Self.request(&engine, [0xC1], complication: true)
                == [.appendTransfer(sequence: 3, payload: [0xC1], complication: true)])
        #expect(Self.request(&engine, [3]) == [.appendTransfer(sequence: 9, payload: [3], complication: false)])
        // Issued is not queued: the outbox holds only what was persisted.
        #expect(engine.outstandingTransfers.map(\.sequence) == [6])
        _ = engine.handle(.transferPersisted(sequence: 7, payload: [1]))
        #expect(engine.outstandingTransfers.map(\.sequence) == [6, 7])
    }

    @Test("after a failed append its number and every later one are issued again; a persisted one never is")
    func reissuedAfterFailure() {
        var engine = Self.engine()
        for payload: UInt8 in 1...4 { _ = Self.request(&engine, [payload]) }  // 7, 8, 9, 10
        _ = engine.handle(.transferPersisted(sequence: 7, payload: [1]))
        _ = engine.handle(.transfersNotPersisted(from: 8))
        #expect(Self.request(&engine, [5]) == [.appendTransfer(sequence: 8, payload: [5], complication: false)])
        // A report naming a persisted transfer takes nothing back.
        _ = engine.handle(.transfersNotPersisted(from: 7))
        #expect(Self.request(&engine, [6]) == [.appendTransfer(sequence: 9, payload: [6], complication: false)])
        // The complication queue is untouched by the ordinary one's failure.
        #expect(
            Self.request(&engine, [0xC1], complication: true)
                == [.appendTransfer(sequence: 3, payload: [0xC1], complication: true)])
    }

    @Test("a complication asked of a side without a complication outbox is dropped with a log line")
    func noComplicationOutbox() {
        var engine = Self.engine(complications: false)
        #expect(Self.request(&engine, [1], complication: true) == [.log(.noComplicationOutbox)])
        #expect(Self.request(&engine, [1]) == [.appendTransfer(sequence: 7, payload: [1], complication: false)])
    }

    @Test(
        "files are numbered from the restored next file sequence, in call order; a copy that failed leaves its number unused"
    )
    func files() {
        let queue = InstanceID(bytes: [UInt8](repeating: 0xF0, count: 16))!
        var engine = LinkEngine(
            configuration: LinkConfiguration(role: .watch), instance: LinkPair.watchInstance,
            authenticator: FakeAuthenticator(key: HandshakeSamples.key),
            restored: RestoredLinkState(outboxQueue: LinkPair.watchQueue, fileQueue: queue, nextFileSequence: 12),
            seed: 1)
        #expect(
            engine.handle(.fileRequested(.bytes([1]), metadata: "{}"))
                == [.enqueueFile(sequence: 12, .bytes([1]), metadata: "{}")])
        #expect(
            engine.handle(.fileRequested(.file(path: "/a"), metadata: "{}"))
                == [.enqueueFile(sequence: 13, .file(path: "/a"), metadata: "{}")])
        // 12's copy failed (never persisted): 13 is queued alone, and the next number is 14.
        let file = OutboundFile(
            sequence: 13, size: 1, digest: [UInt8](repeating: 0, count: LinkFrame.digestByteCount), metadata: "{}")
        _ = engine.handle(.filePersisted(file))
        #expect(engine.outstandingFiles.map(\.sequence) == [13])
        #expect(
            engine.handle(.fileRequested(.bytes([2]), metadata: "{}"))
                == [.enqueueFile(sequence: 14, .bytes([2]), metadata: "{}")])
    }
}
