// LiveMirror: see Package.swift.
