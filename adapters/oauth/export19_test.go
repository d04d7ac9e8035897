package mcpoauth

// Names the external tests use, unexported by issue 19.
const DefaultLeeway = defaultLeeway
const DefaultRefreshMinInterval = defaultRefreshMinInterval
const DefaultMaxResponseBytes = defaultMaxResponseBytes
const DefaultCacheMaxEntries = defaultCacheMaxEntries
const DefaultKeysMaxAge = defaultKeysMaxAge
const DefaultMaxTokenBytes = defaultMaxTokenBytes
const DefaultCacheFor = defaultCacheFor
