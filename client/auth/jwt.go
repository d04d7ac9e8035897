package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// jwtAlg is the JWS algorithm of a signing key: ES256 (ECDSA P-256), RS256
// (RSA) or EdDSA (Ed25519).
func jwtAlg(key crypto.Signer) (string, error) {
	switch k := key.Public().(type) {
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() {
			return "", errors.New("hexmcp: an ECDSA client key must be on P-256 (ES256)")
		}
		return "ES256", nil
	case *rsa.PublicKey:
		return "RS256", nil
	case ed25519.PublicKey:
		return "EdDSA", nil
	}
	return "", fmt.Errorf("hexmcp: a client key of type %T is not supported (ECDSA P-256, RSA or Ed25519)", key.Public())
}

// signJWT returns the compact JWS of claims signed with key, header
// fields added to alg and typ.
func signJWT(key crypto.Signer, header, claims map[string]any) (string, error) {
	alg, err := jwtAlg(key)
	if err != nil {
		return "", err
	}
	h := map[string]any{"alg": alg}
	for k, v := range header {
		h[k] = v
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	cb, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := base64.RawURLEncoding.EncodeToString(hb) + "." + base64.RawURLEncoding.EncodeToString(cb)
	var sig []byte
	switch alg {
	case "EdDSA":
		sig, err = key.Sign(rand.Reader, []byte(input), crypto.Hash(0))
	case "RS256":
		d := sha256.Sum256([]byte(input))
		sig, err = key.Sign(rand.Reader, d[:], crypto.SHA256)
	case "ES256":
		d := sha256.Sum256([]byte(input))
		var der []byte
		if der, err = key.Sign(rand.Reader, d[:], crypto.SHA256); err == nil {
			sig, err = rawECDSA(der)
		}
	}
	if err != nil {
		return "", fmt.Errorf("hexmcp: signing a JWT: %w", err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// rawECDSA turns an ASN.1 ECDSA P-256 signature into JWS's r||s.
func rawECDSA(der []byte) ([]byte, error) {
	var s struct{ R, S *big.Int }
	if _, err := asn1.Unmarshal(der, &s); err != nil {
		return nil, err
	}
	out := make([]byte, 64)
	s.R.FillBytes(out[:32])
	s.S.FillBytes(out[32:])
	return out, nil
}

// clientAssertion is a private_key_jwt client assertion (RFC 7523 section
// 2.2): the client's id as iss and sub, the authorization server's issuer
// as aud, a minute to live.
func clientAssertion(key crypto.Signer, clientID, audience string) (string, error) {
	now := time.Now()
	return signJWT(key, map[string]any{"typ": "JWT"}, map[string]any{
		"iss": clientID, "sub": clientID, "aud": audience,
		"iat": now.Unix(), "exp": now.Add(time.Minute).Unix(), "jti": randomString(16),
	})
}
