// The watch's pure decisions: the cache applier, optimistic edits, the session coordinator.
