package web

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// selfSigned writes a certificate for 127.0.0.1 and its key into dir and
// returns a pool that trusts it.
func selfSigned(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "torchmem test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, "tls.crt"), "CERTIFICATE", der)
	writePEM(t, filepath.Join(dir, "tls.key"), "EC PRIVATE KEY", kder)
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// webConfig writes a web configuration with TLS (cert paths relative to
// the file, as exporter-toolkit resolves them) and the given users.
func webConfig(t *testing.T, dir string, users map[string]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n")
	if len(users) > 0 {
		b.WriteString("basic_auth_users:\n")
		for u, pw := range users {
			h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "  %s: %s\n", u, h)
		}
	}
	p := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func reliabilityTLS(t *testing.T, check, expected, observed string) {
	t.Helper()
	t.Logf("RELIABILITY|%s|%s|%s", check, expected, observed)
}

// TestReliabilityServeTLS: with a web config's tls_server_config the token
// travels inside TLS; a plain-HTTP request to the port gets no data; a
// wrong token is refused; the browser cookie is Secure, HttpOnly,
// SameSite=Strict and is not the token.
func TestReliabilityServeTLS(t *testing.T) {
	dir := t.TempDir()
	roots := selfSigned(t, dir)
	cfg := webConfig(t, dir, nil)
	if wc, err := ReadWebConfig(cfg); err != nil || !wc.TLS || wc.BasicAuth {
		t.Fatalf("ReadWebConfig = %+v, %v", wc, err)
	}
	f := newFixture(t, fixtureOpts{token: testToken, samples: 10, webConfig: cfg, roots: roots})
	ok := f.get(t, "/api/v1/node", testToken)
	if ok.StatusCode != 200 || ok.TLS == nil {
		t.Fatalf("https with the token: %d, TLS %v", ok.StatusCode, ok.TLS != nil)
	}
	reliabilityTLS(t, "serve over TLS with the token", "200 over TLS", fmt.Sprintf("%d, TLS %v", ok.StatusCode, ok.TLS != nil))

	wrong := f.get(t, "/api/v1/node", "wrong-token-0123456789")
	reliabilityTLS(t, "serve over TLS, wrong token", "401", fmt.Sprint(wrong.StatusCode))
	if wrong.StatusCode != 401 {
		t.Errorf("wrong token: %d", wrong.StatusCode)
	}

	plain := plainGet(t, strings.Replace(f.url, "https://", "http://", 1)+"/api/v1/node")
	reliabilityTLS(t, "plain HTTP to the TLS port", "no answer but an error or 400", plain)
	if strings.HasPrefix(plain, "200") {
		t.Errorf("plain HTTP to the TLS port answered %s", plain)
	}

	c := sessionCookie(t, f)
	reliabilityTLS(t, "session cookie over TLS", "Secure HttpOnly SameSite=Strict, not the token",
		fmt.Sprintf("Secure %v HttpOnly %v SameSite=Strict %v, holds the token %v", c.Secure, c.HttpOnly,
			c.SameSite == http.SameSiteStrictMode, strings.Contains(c.Value, testToken)))
	if !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || strings.Contains(c.Value, testToken) {
		t.Errorf("cookie = %+v", c)
	}
	if code := withCookie(t, f, &http.Cookie{Name: tokenCookie, Value: c.Value}); code != 200 {
		t.Errorf("API with the session cookie: %d", code)
	}
	// The cookie of an older agent held the raw token: no longer accepted.
	if code := withCookie(t, f, &http.Cookie{Name: tokenCookie, Value: testToken}); code != 401 {
		t.Errorf("API with the raw token as cookie: %d", code)
	}
}

// plainGet sends an HTTP request to a TLS port and describes the result.
func plainGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return "error: " + err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == 200 || strings.Contains(string(b), `"host"`) {
		return "200 with data"
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
}

func sessionCookie(t *testing.T, f *fixture) *http.Cookie {
	t.Helper()
	resp := f.get(t, "/?token="+testToken, "")
	for _, c := range resp.Cookies() {
		if c.Name == tokenCookie {
			return c
		}
	}
	t.Fatalf("no cookie from /?token= (%d)", resp.StatusCode)
	return nil
}

func withCookie(t *testing.T, f *fixture, c *http.Cookie) int {
	t.Helper()
	req, _ := http.NewRequest("GET", f.url+"/api/v1/node", nil)
	req.AddCookie(c)
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestReliabilityServeBasicAuth: basic_auth_users of the web config guard
// every path (exporter-toolkit's check, as node_exporter's).
func TestReliabilityServeBasicAuth(t *testing.T) {
	dir := t.TempDir()
	roots := selfSigned(t, dir)
	cfg := webConfig(t, dir, map[string]string{"prometheus": "correct horse battery"})
	if wc, err := ReadWebConfig(cfg); err != nil || !wc.TLS || !wc.BasicAuth {
		t.Fatalf("ReadWebConfig = %+v, %v", wc, err)
	}
	f := newFixture(t, fixtureOpts{samples: 10, webConfig: cfg, roots: roots})
	got := map[string]int{}
	for name, pw := range map[string]string{"right": "correct horse battery", "wrong": "incorrect", "none": ""} {
		req, _ := http.NewRequest("GET", f.url+"/metrics", nil)
		if pw != "" {
			req.SetBasicAuth("prometheus", pw)
		}
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got[name] = resp.StatusCode
	}
	reliabilityTLS(t, "basic auth from --web.config.file", "right 200, wrong 401, none 401",
		fmt.Sprintf("right %d, wrong %d, none %d", got["right"], got["wrong"], got["none"]))
	if got["right"] != 200 || got["wrong"] != 401 || got["none"] != 401 {
		t.Errorf("basic auth: %v", got)
	}
}

func TestReadWebConfigErrors(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"unknown key":  "tls_server_config:\n  cert_file: tls.crt\n  colour: red\n",
		"missing cert": "tls_server_config:\n  cert_file: none.crt\n  key_file: none.key\n",
		"no key":       "tls_server_config:\n  cert_file: tls.crt\n",
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yml")
		os.WriteFile(p, []byte(body), 0o600)
		if _, err := ReadWebConfig(p); err == nil || !strings.Contains(err.Error(), "--web.config.file "+p) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := ReadWebConfig(filepath.Join(dir, "absent.yml")); err == nil {
		t.Error("absent file accepted")
	}
}
