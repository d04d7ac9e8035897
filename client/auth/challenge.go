package auth

import (
	"net/http"
	"strings"
)

// challenge is the Bearer challenge of a WWW-Authenticate header (RFC 6750
// section 3): its parameters, names in lower case.
type challenge struct {
	found  bool
	params map[string]string
}

func (c challenge) error() string            { return c.params["error"] }
func (c challenge) scopes() []string         { return strings.Fields(c.params["scope"]) }
func (c challenge) resourceMetadata() string { return c.params["resource_metadata"] }

// bearerChallenge returns the first Bearer challenge of h's
// WWW-Authenticate headers (RFC 9110 section 11.6.1), else the first DPoP
// one (RFC 9449 section 7.1), if any.
func bearerChallenge(h http.Header) challenge {
	var dpop challenge
	for _, v := range h.Values("WWW-Authenticate") {
		for _, c := range parseChallenges(v) {
			if strings.EqualFold(c.scheme, "Bearer") {
				return challenge{found: true, params: c.params}
			}
			if strings.EqualFold(c.scheme, "DPoP") && !dpop.found {
				dpop = challenge{found: true, params: c.params}
			}
		}
	}
	return dpop
}

type rawChallenge struct {
	scheme string
	params map[string]string
}

// parseChallenges parses a WWW-Authenticate value: challenges separated by
// commas, each a scheme then a token68 or auth-params (token=token or
// token=quoted-string). It is lenient: what it cannot read ends the parse.
func parseChallenges(s string) []rawChallenge {
	var out []rawChallenge
	p := &lexer{s: s}
	for {
		p.skipSpaceAndCommas()
		if p.done() {
			return out
		}
		scheme := p.token()
		if scheme == "" {
			return out
		}
		c := rawChallenge{scheme: scheme, params: map[string]string{}}
		p.skipSpace()
		if p.token68() {
			out = append(out, c) // its credentials are not ours to read
			continue
		}
		for {
			p.skipSpace()
			save := p.i
			name := p.token()
			p.skipSpace()
			if name == "" || !p.eat('=') {
				// A token68, or the next challenge's scheme.
				p.i = save
				if name != "" && len(c.params) == 0 {
					p.skipToken68()
				}
				break
			}
			p.skipSpace()
			var val string
			if p.peek() == '"' {
				val = p.quoted()
			} else {
				val = p.token()
			}
			c.params[strings.ToLower(name)] = val
			p.skipSpace()
			if !p.eat(',') {
				break
			}
		}
		out = append(out, c)
	}
}

type lexer struct {
	s string
	i int
}

func (l *lexer) done() bool { return l.i >= len(l.s) }
func (l *lexer) peek() byte {
	if l.done() {
		return 0
	}
	return l.s[l.i]
}

func (l *lexer) eat(c byte) bool {
	if l.peek() == c && !l.done() {
		l.i++
		return true
	}
	return false
}

func (l *lexer) skipSpace() {
	for !l.done() && (l.s[l.i] == ' ' || l.s[l.i] == '\t') {
		l.i++
	}
}

func (l *lexer) skipSpaceAndCommas() {
	for !l.done() && (l.s[l.i] == ' ' || l.s[l.i] == '\t' || l.s[l.i] == ',') {
		l.i++
	}
}

// token reads an RFC 9110 token.
func (l *lexer) token() string {
	start := l.i
	for !l.done() && isTokenChar(l.s[l.i]) {
		l.i++
	}
	return l.s[start:l.i]
}

// skipToken68 skips a token68 (token characters, then '=' padding).
func (l *lexer) skipToken68() {
	for !l.done() && (isTokenChar(l.s[l.i]) || l.s[l.i] == '/') {
		l.i++
	}
	for l.eat('=') {
	}
}

// token68 skips a token68 that stands alone as a challenge's credentials
// (RFC 9110 section 11.2: followed by the end, or by a comma before the
// next challenge) and reports whether it did; an auth-param ("realm=x")
// is left to the caller.
func (l *lexer) token68() bool {
	start := l.i
	for !l.done() && isToken68Char(l.s[l.i]) {
		l.i++
	}
	empty := l.i == start
	for l.eat('=') {
	}
	end := l.i
	l.skipSpace()
	if empty || !l.done() && l.peek() != ',' {
		l.i = start
		return false
	}
	l.i = end
	return true
}

// isToken68Char reports whether c may stand in a token68 before its
// padding: ALPHA, DIGIT, "-", ".", "_", "~", "+", "/".
func isToken68Char(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}

// quoted reads a quoted-string, unescaping quoted-pairs.
func (l *lexer) quoted() string {
	l.i++ // the opening quote
	var b strings.Builder
	for !l.done() {
		c := l.s[l.i]
		l.i++
		switch c {
		case '"':
			return b.String()
		case '\\':
			if !l.done() {
				b.WriteByte(l.s[l.i])
				l.i++
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
