package memory

// Names the external tests use, unexported by issue 19.
const DefaultMaxEventBytes = defaultMaxEventBytes
const DefaultMinPendingIdleForEviction = defaultMinPendingIdleForEviction
