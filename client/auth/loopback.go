package auth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// LoopbackAuthorizer returns an [Authorizer] for a native application
// (RFC 8252 section 7.3): for each authorization it listens on the host
// and port of redirectURL, an http URL on a loopback address
// (http://127.0.0.1:8976/callback, the RedirectURL of the Options, as
// registered), calls open with the authorization URL (which opens the
// user's browser), waits for the browser's request to redirectURL's path,
// answers it with a short page, and returns its query. It stops listening
// when it returns, when ctx ends.
func LoopbackAuthorizer(redirectURL string, open func(ctx context.Context, authURL string) error) (Authorizer, error) {
	ru, err := url.Parse(redirectURL)
	if err != nil {
		return nil, fmt.Errorf("hexmcp: the redirect URL: %w", err)
	}
	if ru.Scheme != "http" || !isLoopback(ru.Hostname()) || ru.Port() == "" {
		return nil, fmt.Errorf("hexmcp: the redirect URL %q is not http on a loopback host with a port", redirectURL)
	}
	path := ru.Path
	if path == "" {
		path = "/"
	}
	return func(ctx context.Context, authURL string) (Callback, error) {
		var lc net.ListenConfig
		l, err := lc.Listen(ctx, "tcp", ru.Host)
		if err != nil {
			return Callback{}, fmt.Errorf("hexmcp: listening for the redirect: %w", err)
		}
		got := make(chan url.Values, 1)
		srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != path || r.Method != http.MethodGet {
				http.NotFound(w, r)
				return
			}
			select {
			case got <- r.URL.Query():
			default:
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = fmt.Fprintln(w, "The authorization is done: you may close this window.")
		})}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(l) }()
		defer func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
			<-served
		}()
		if err := open(ctx, authURL); err != nil {
			return Callback{}, fmt.Errorf("hexmcp: opening the authorization URL: %w", err)
		}
		select {
		case q := <-got:
			return CallbackFromQuery(q), nil
		case err := <-served:
			served <- err
			return Callback{}, errors.Join(errors.New("hexmcp: the redirect listener stopped"), err)
		case <-ctx.Done():
			return Callback{}, ctx.Err()
		}
	}, nil
}
