// The link's I/O shell: sockets, timers, its outboxes and state files (on DurableFiles), and libcrypto.
import COpenSSL
