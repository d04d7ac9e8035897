package app

// Names the external tests use, unexported by issue 19.
const DefaultMaxListenSubscriptions = defaultMaxListenSubscriptions
const DefaultMaxURILength = defaultMaxURILength
