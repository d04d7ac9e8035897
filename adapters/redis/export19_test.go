package mcpredis

// Names the external tests use, unexported by issue 19.
var EncodeNotice = encodeNotice
var DecodeNotice = decodeNotice
