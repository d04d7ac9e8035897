package main

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"

	"github.com/hexmcp/hexmcp/client"
	"github.com/hexmcp/hexmcp/client/auth"
)

// The client's identity in the authorization scenarios: its redirect URI
// (the suite's authorization server redirects to it at once, nobody
// listens there) and its Client ID Metadata Document's URL.
const (
	redirectURL       = "http://localhost:3000/callback"
	clientMetadataURL = "https://conformance-test.local/client-metadata.json"
)

// authScenario connects through the authorization flow of client/auth,
// lists the tools and calls test-tool: the suite's server answers 401
// (or 403) until the token is right.
func authScenario(ctx context.Context, url string, sc scenarioContext) error {
	opts := auth.Options{
		ClientID:          sc.ClientID,
		ClientSecret:      sc.ClientSecret,
		ClientMetadataURL: clientMetadataURL,
		RedirectURL:       redirectURL,
		Authorizer:        auth.HeadlessAuthorizer(nil),
	}
	switch sc.Name {
	case "auth/client-credentials-basic":
		opts.ClientCredentials = true
	case "auth/client-credentials-jwt":
		key, err := parseKey(sc.PrivateKeyPEM)
		if err != nil {
			return err
		}
		opts.ClientCredentials, opts.ClientKey = true, key
	case "auth/enterprise-managed-authorization":
		// The user's ID token from the enterprise's single sign-on,
		// exchanged at its identity provider for an ID-JAG.
		opts.JWTBearer = auth.IDJAGExchange(auth.IDJAGOptions{
			TokenEndpoint: sc.IDPTokenEndpoint, ClientID: sc.IDPClientID,
			IDToken: func(context.Context) (string, error) { return sc.IDPIDToken, nil },
		})
	case "auth/dpop", "auth/dpop-nonce":
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		opts.DPoPKey = key
	case "auth/wif-jwt-bearer":
		// The workload's identity token, as its platform would issue it.
		opts.JWTBearer = func(context.Context, string, string) (string, error) { return sc.ValidJWT, nil }
	}
	tr, err := auth.NewTransport(opts)
	if err != nil {
		return err
	}
	s, err := connect(ctx, url, options(), client.HTTPOptions{Client: &http.Client{Transport: tr}})
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := client.Collect(s.ListTools(ctx)); err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	if _, err := s.CallTool(ctx, "test-tool", map[string]any{}); err != nil {
		return fmt.Errorf("tools/call: %w", err)
	}
	return nil
}

// parseKey reads a PKCS #8 private key in PEM.
func parseKey(s string) (crypto.Signer, error) {
	b, _ := pem.Decode([]byte(s))
	if b == nil {
		return nil, errors.New("the context's private_key_pem is no PEM")
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil, err
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("a private key of type %T", k)
	}
	return signer, nil
}
