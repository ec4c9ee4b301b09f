// chaostest: see Package.swift.
print("chaostest: not written yet")
