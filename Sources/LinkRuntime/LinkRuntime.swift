// The link's I/O shell: sockets, timers, durable files and libcrypto.
import COpenSSL
