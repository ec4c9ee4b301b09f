import Testing

@Test("the test target builds") func targetBuilds() {}
