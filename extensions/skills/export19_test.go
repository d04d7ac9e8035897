package skills

// Names the external tests use, unexported by issue 19.
const (
	MaxDescriptionLength   = maxDescriptionLength
	MaxCompatibilityLength = maxCompatibilityLength
)
