package mcpoauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/go-json-experiment/json"
)

// Defaults shared by [JWTOptions] and [IntrospectionOptions].
const (
	// DefaultMaxResponseBytes bounds every document read from an
	// authorization server (metadata, key set, introspection answer):
	// 1 MiB.
	defaultMaxResponseBytes = 1 << 20
	// defaultFetchTimeout bounds each request to an authorization server.
	defaultFetchTimeout = 10 * time.Second
	// DefaultMaxTokenBytes bounds the tokens an authenticator looks at:
	// a longer one is refused unread. 16 KiB.
	defaultMaxTokenBytes = 16 << 10
	// DefaultLeeway is the clock skew allowed between this server and the
	// authorization server when checking exp, nbf and iat: 30 seconds,
	// more than the drift of clocks kept by NTP and small next to an
	// access token's lifetime (minutes to an hour), so that an expired
	// token is accepted for at most half a minute.
	defaultLeeway = 30 * time.Second
)

// defaultHTTPClient is the client used when the options name none: it
// follows no redirect (an authorization server's documents are where its
// metadata says; a redirect could lead off https) and gives up after
// defaultFetchTimeout.
var defaultHTTPClient = &http.Client{
	Timeout: defaultFetchTimeout,
	CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	},
}

// statusError is an answer other than 200.
type statusError struct {
	url    string
	status int
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s answered %d", e.url, e.status)
}

// readBounded reads at most max bytes of r; more is an error.
func readBounded(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("answer larger than %d bytes", max)
	}
	return b, nil
}

// do sends req and decodes a 200 answer of at most max bytes into dst
// (strict JSON: duplicate member names are an error). A status other than
// 200 is a *statusError.
func do(client *http.Client, req *http.Request, max int64, dst any) error {
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10)) // let the connection be reused
		return &statusError{url: req.URL.Redacted(), status: resp.StatusCode}
	}
	b, err := readBounded(resp.Body, max)
	if err != nil {
		return fmt.Errorf("%s: %w", req.URL.Redacted(), err)
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("%s: %w", req.URL.Redacted(), err)
	}
	return nil
}

// getJSON fetches url into dst, within timeout.
func getJSON(ctx context.Context, client *http.Client, url string, timeout time.Duration, max int64, dst any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	return do(client, req, max, dst)
}

// notFound reports whether err says the document is not there (404 or
// 410), so that discovery tries the next well-known URL.
func notFound(err error) bool {
	var se *statusError
	return errors.As(err, &se) && (se.status == http.StatusNotFound || se.status == http.StatusGone)
}
