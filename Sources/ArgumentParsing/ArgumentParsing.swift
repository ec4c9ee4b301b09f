// ArgumentParsing: see Package.swift.
