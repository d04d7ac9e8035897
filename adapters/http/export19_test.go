package mcphttp

// Names the external tests use, unexported by issue 19.
const DefaultMaxConnsPerClient = defaultMaxConnsPerClient
