// PhoneStore: see Package.swift.
