// DaemonRuntime: see Package.swift.
