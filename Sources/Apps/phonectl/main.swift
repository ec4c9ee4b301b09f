import AdminClient
// phonectl: the admin CLI of phoned. Parses argv purely (AdminCommands.PhoneCommands), sends the
// command over phoned's admin socket, prints the answer. Exit codes: 0, 64 usage, 69 unreachable, 1 refused.
import AdminCommands
import DaemonConfiguration

CLIRunner(
    daemonName: "phoned", socketEnvironmentVariable: "PHONED_ADMIN_SOCKET", spec: PhoneCommands.spec,
    command: PhoneCommand.self, adminSocketFromConfig: { try PhonedConfiguration.load(path: $0).adminSocket }
).main()
