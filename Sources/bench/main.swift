// bench: see Package.swift.
print("bench: not written yet")
