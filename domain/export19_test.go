package domain

// Names the external tests use, unexported by issue 19.
var ValidateTemplate = validateTemplate
var MatchTemplateRaw = matchTemplateRaw
var MatchTemplate = matchTemplateDecoded
