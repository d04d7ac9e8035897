package mcpotel

// Names the external tests use, unexported by issue 19.
const KeyStatusCode = keyStatusCode
const KeyRequestID = keyRequestID
const KeyClientPort = keyClientPort
const ErrorTypeCancelled = errorTypeCancelled
const KeyToolName = keyToolName
const KeyErrorType = keyErrorType
const KeySessionID = keySessionID
const ErrorTypeToolError = errorTypeToolError
const KeyNetTransport = keyNetTransport
const KeyNetProtocol = keyNetProtocol
const Other = otherValue
const KeyResourceURI = keyResourceURI
const KeyProtocolVersion = keyProtocolVersion
const KeyMethodName = keyMethodName
const KeyOperationName = keyOperationName
const KeyClientAddress = keyClientAddress
