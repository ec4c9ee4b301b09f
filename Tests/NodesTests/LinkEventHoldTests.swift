import LinkProtocol
import Nodes
import Testing

/// The link's events while writes are in flight: held and joined, fed together once they land.
@Suite("Link event hold: group commit of what arrives while the disk is busy")
struct LinkEventHoldTests {
    static let at = LinkInstant(.seconds(1))
    static func bytes(_ connection: Int, _ count: Int) -> LinkEngine.Event {
        .bytesReceived(ConnectionID(connection), Array(repeating: 1, count: count), now: at)
    }

    @Test("with no write in flight every event is fed at once")
    func idle() {
        var hold = LinkEventHold()
        #expect(hold.arrived(Self.bytes(1, 10), writesBusyFor: nil) == [Self.bytes(1, 10)])
        #expect(hold.isEmpty)
    }

    @Test("while writes are in flight, bytes wait, one connection's joined into one event, and come out in order")
    func heldAndJoined() {
        var hold = LinkEventHold()
        hold.sent(1)
        let busy = Duration.milliseconds(2)
        #expect(hold.arrived(Self.bytes(1, 10), writesBusyFor: busy).isEmpty)
        #expect(hold.arrived(Self.bytes(1, 5), writesBusyFor: busy).isEmpty)
        #expect(hold.arrived(Self.bytes(2, 3), writesBusyFor: busy).isEmpty)
        #expect(hold.arrived(.connectionClosed(ConnectionID(2), now: Self.at), writesBusyFor: busy).isEmpty)
        #expect(!hold.isEmpty)
        #expect(
            hold.release() == [Self.bytes(1, 15), Self.bytes(2, 3), .connectionClosed(ConnectionID(2), now: Self.at)])
        #expect(hold.isEmpty)
    }

    @Test("joined events stay within 64 KiB")
    func joinLimit() {
        var hold = LinkEventHold()
        hold.sent(1)
        let busy = Duration.milliseconds(2)
        _ = hold.arrived(Self.bytes(1, 40 << 10), writesBusyFor: busy)
        _ = hold.arrived(Self.bytes(1, 40 << 10), writesBusyFor: busy)
        #expect(hold.release() == [Self.bytes(1, 40 << 10), Self.bytes(1, 40 << 10)])
    }

    @Test("a tick is never held, and takes what waits before it along; so does a slow write")
    func tickAndSlowWrite() {
        var hold = LinkEventHold()
        hold.sent(1)
        _ = hold.arrived(Self.bytes(1, 10), writesBusyFor: .milliseconds(2))
        #expect(
            hold.arrived(.tick(now: Self.at), writesBusyFor: .milliseconds(2)) == [
                Self.bytes(1, 10), .tick(now: Self.at),
            ])
        _ = hold.arrived(Self.bytes(1, 10), writesBusyFor: .milliseconds(2))
        #expect(
            hold.arrived(Self.bytes(1, 1), writesBusyFor: .milliseconds(150)) == [Self.bytes(1, 10), Self.bytes(1, 1)])
        #expect(hold.isEmpty)
    }

    @Test("much waiting makes it full, so the shell stops reading")
    func full() {
        var hold = LinkEventHold()
        hold.sent(1)
        for connection in 1...65 { _ = hold.arrived(Self.bytes(connection, 1), writesBusyFor: .milliseconds(1)) }
        #expect(hold.isFull)
    }

    @Test(
        "an admin request's writes hold nothing; the intake's hold until they land, a command's sent after or not"
    )
    func onlyTheIntakeHolds() {
        typealias Event = LinkedNode<ScriptedNode>.Event
        var hold = LinkEventHold()
        let busy = Duration.milliseconds(2)
        // The watch's own edit syncs: a context coming back is fed at once.
        hold.feeding(Event.inner(.command([])))
        hold.sent(1)
        #expect(!hold.isHolding)
        #expect(hold.arrived(Self.bytes(1, 10), writesBusyFor: busy) == [Self.bytes(1, 10)])
        // A resumed admin request is still one.
        hold.feeding(Event.resume)
        hold.sent(2)
        #expect(hold.arrived(Self.bytes(1, 5), writesBusyFor: busy) == [Self.bytes(1, 5)])
        // The link's intake holds what arrives, and so does its resumed step, until its writes land.
        hold.feeding(Event.link(Self.bytes(1, 10)))
        hold.sent(3)
        hold.feeding(Event.resume)
        hold.sent(4)
        hold.feeding(Event.inner(.command([])))
        hold.sent(5)
        #expect(hold.isHolding)
        #expect(hold.arrived(Self.bytes(2, 3), writesBusyFor: busy).isEmpty)
        #expect(hold.landed(through: 3).isEmpty)
        #expect(hold.landed(through: 4) == [Self.bytes(2, 3)], "the command's write 5 holds nothing")
        #expect(!hold.isHolding && hold.isEmpty)
        // A shell's own report (an end of turn, a timer) raises writes that hold.
        hold.feeding(Event.inner(.reported(.turnEnded)))
        hold.sent(6)
        #expect(hold.isHolding)
    }
}
