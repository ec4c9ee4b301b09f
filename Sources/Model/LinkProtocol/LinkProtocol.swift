// The link's pure protocol layer: frames, the handshake and the per-channel state machines.
// Nothing in this module reads a clock, a random source, a file or a socket.
