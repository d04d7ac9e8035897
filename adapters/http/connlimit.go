package mcphttp

import (
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"
)

// Defaults of the connection bounds of [ServerOptions].
const (
	// defaultMaxConns bounds the connections a [Server] holds open at once.
	defaultMaxConns = 10_000
	// DefaultMaxConnsPerClient bounds the connections from one remote IP
	// address.
	defaultMaxConnsPerClient = 256
)

// refusal is what a connection over a bound gets before it is closed: a
// complete HTTP/1.1 response, so that a client sees why (net/http has not
// read anything of the request yet, so nothing better can be said).
func refusal(status int, text, why string) []byte {
	body := `{"jsonrpc":"2.0","error":{"code":-32603,"message":"` + why + `"}}`
	return []byte("HTTP/1.1 " + strconv.Itoa(status) + " " + text + "\r\n" +
		"Content-Type: application/json\r\n" +
		"Retry-After: 5\r\n" +
		"Connection: close\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

var (
	refuseTotal  = refusal(503, "Service Unavailable", "Service unavailable: the server holds too many connections")
	refuseClient = refusal(429, "Too Many Requests", "Too Many Requests: too many connections from this address")
)

// limitListener bounds the connections open at once, in total and per
// remote IP. A connection past a bound is answered with a short HTTP error
// (503 past the total, 429 past the per-address bound, with Retry-After)
// and closed at once, without blocking Accept: the kernel's backlog never
// fills with connections waiting for a slot, so other clients keep being
// served.
type limitListener struct {
	net.Listener
	max, perClient int // <= 0: no bound
	// exempt are the addresses the per-client bound does not apply to
	// (ServerOptions.TrustedProxies).
	exempt []netip.Prefix

	mu       sync.Mutex
	open     int
	byClient map[string]int
}

func newLimitListener(ln net.Listener, max, perClient int, exempt []netip.Prefix) net.Listener {
	if max <= 0 && perClient <= 0 {
		return ln
	}
	return &limitListener{Listener: ln, max: max, perClient: perClient, exempt: exempt, byClient: make(map[string]int)}
}

// perClientBound reports whether the per-client bound applies to ip.
func (l *limitListener) perClientBound(ip string) bool {
	if l.perClient <= 0 {
		return false
	}
	if len(l.exempt) == 0 {
		return true
	}
	a, ok := remoteIP(ip)
	return !ok || !inPrefixes(a, l.exempt)
}

func clientIP(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// Accept returns the next connection within the bounds.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := clientIP(c.RemoteAddr())
		bounded := l.perClientBound(ip)
		l.mu.Lock()
		var refuse []byte
		switch {
		case l.max > 0 && l.open >= l.max:
			refuse = refuseTotal
		case bounded && l.byClient[ip] >= l.perClient:
			refuse = refuseClient
		default:
			l.open++
			l.byClient[ip]++
		}
		l.mu.Unlock()
		if refuse != nil {
			go func() {
				_ = c.SetWriteDeadline(time.Now().Add(time.Second))
				_, _ = c.Write(refuse)
				_ = c.Close()
			}()
			continue
		}
		return &limitedConn{Conn: c, l: l, ip: ip}, nil
	}
}

func (l *limitListener) release(ip string) {
	l.mu.Lock()
	l.open--
	if n := l.byClient[ip] - 1; n > 0 {
		l.byClient[ip] = n
	} else {
		delete(l.byClient, ip)
	}
	l.mu.Unlock()
}

// limitedConn gives its slot back once, on its first Close.
type limitedConn struct {
	net.Conn
	l    *limitListener
	ip   string
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.ip) })
	return err
}

// Unwrap returns the underlying connection.
func (c *limitedConn) Unwrap() net.Conn { return c.Conn }
