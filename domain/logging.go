package domain

// LogLevel is the severity of a log message sent to the client
// (notifications/message), as in RFC 5424.
type LogLevel string

// The log levels, from the least to the most severe.
const (
	LogDebug     LogLevel = "debug"
	LogInfo      LogLevel = "info"
	LogNotice    LogLevel = "notice"
	LogWarning   LogLevel = "warning"
	LogError     LogLevel = "error"
	LogCritical  LogLevel = "critical"
	LogAlert     LogLevel = "alert"
	LogEmergency LogLevel = "emergency"
)

var logSeverity = map[LogLevel]int{
	LogDebug: 0, LogInfo: 1, LogNotice: 2, LogWarning: 3, LogError: 4, LogCritical: 5, LogAlert: 6, LogEmergency: 7,
}

// Valid reports whether l is one of the eight levels.
func (l LogLevel) Valid() bool {
	_, ok := logSeverity[l]
	return ok
}

// AtLeast reports whether l is as severe as min or more: a message at l is
// sent to a client that asked for min. An unset or invalid min lets nothing
// through.
func (l LogLevel) AtLeast(min LogLevel) bool {
	ls, ok1 := logSeverity[l]
	ms, ok2 := logSeverity[min]
	return ok1 && ok2 && ls >= ms
}
