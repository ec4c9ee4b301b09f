import AdminClient
// watchctl: the admin CLI of watchd. Parses argv purely (AdminCommands.WatchCommands), sends the
// command over watchd's admin socket, prints the answer. Exit codes: 0, 64 usage, 69 unreachable, 1 refused.
import AdminCommands
import DaemonConfiguration

CLIRunner(
    daemonName: "watchd", socketEnvironmentVariable: "WATCHD_ADMIN_SOCKET", spec: WatchCommands.spec,
    command: WatchCommand.self, adminSocketFromConfig: { try WatchdConfiguration.load(path: $0).adminSocket }
).main()
