package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// tokenCookie carries a session value for browsers, set by a /?token=…
// visit: not the token itself (see sessionValue).
const tokenCookie = "torchmem_token"

// minTokenLen refuses tokens short enough to guess.
const minTokenLen = 16

// ReadToken reads a bearer token from path: the first line, trimmed. The
// file should be readable by the agent only; a group- or world-readable
// file is refused.
func ReadToken(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("token file %s: mode %04o lets others read it; chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read token file %s: %w", path, err)
	}
	tok, _, _ := strings.Cut(string(b), "\n")
	tok = strings.TrimSpace(tok)
	if len(tok) < minTokenLen {
		return "", fmt.Errorf("token file %s: token shorter than %d characters", path, minTokenLen)
	}
	return tok, nil
}

// Access is how a listening address is protected.
type Access struct {
	Token     bool // --token-file
	BasicAuth bool // basic_auth_users in --web.config.file
	TLS       bool // tls_server_config in --web.config.file
	Insecure  bool // --insecure
}

// CheckListen allows a loopback address always. Any other address needs a
// token or basic auth, or insecure, which returns a warning to print; a
// token or password over plain HTTP is served with a warning too, since
// it crosses the network readable by anyone on the path. That is a
// warning, not a refusal: inside a cluster the network itself may be
// encrypted (a CNI with WireGuard, a service mesh), which torchmem cannot see.
func CheckListen(addr string, a Access) (warning string, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--listen %q: %w", addr, err)
	}
	switch {
	case isLoopback(host):
		return "", nil
	case (a.Token || a.BasicAuth) && a.TLS:
		return "", nil
	case a.Token || a.BasicAuth:
		return fmt.Sprintf("WARNING: serving %s over plain HTTP: the bearer token, the basic-auth password and the session cookie cross the network in clear; give --web.config.file with a tls_server_config (docs/serve.md)", addr), nil
	case a.Insecure:
		return fmt.Sprintf("warning: serving %s without a token (--insecure): anyone who can reach it sees this node's processes, command lines and run history", addr), nil
	}
	return "", fmt.Errorf("--listen %s is not a loopback address: give --token-file (bearer token) or basic_auth_users in --web.config.file, or --insecure to serve it to anyone", addr)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// auth requires the token on every request when one is configured.
func (s *Server) auth(next http.Handler) http.Handler {
	if s.cfg.Token == "" {
		return next
	}
	want, session := []byte(s.cfg.Token), []byte(s.session)
	ok := func(got string) bool { return subtle.ConstantTimeCompare([]byte(got), want) == 1 }
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// /healthz says "ok" and nothing else: probes need no token.
		if r.URL.Path == "/healthz" || (s.cfg.MetricsNoAuth && r.URL.Path == "/metrics") {
			next.ServeHTTP(w, r)
			return
		}
		if bearer, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found && ok(bearer) {
			next.ServeHTTP(w, r)
			return
		}
		if c, err := r.Cookie(tokenCookie); err == nil && subtle.ConstantTimeCompare([]byte(c.Value), session) == 1 {
			next.ServeHTTP(w, r)
			return
		}
		if q := r.URL.Query().Get("token"); q != "" && ok(q) && !strings.HasPrefix(r.URL.Path, "/api/") {
			setTokenCookie(w, r, s.session)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="torchmem"`)
		http.Error(w, "401 unauthorized: this torchmem serve wants its bearer token (Authorization: Bearer …, or open /?token=… once in a browser)", http.StatusUnauthorized)
	})
}

// sessionValue is what the browser's cookie holds instead of the token:
// an HMAC of the token under a key made at start. A cookie read from a
// browser's profile or a proxy's log then does not give the token (which
// Prometheus and scripts also use, maybe on every node), and it stops
// working when the agent restarts or the token changes.
func sessionValue(token string) (string, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("session key: %w", err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("torchmem session\x00" + token))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)), nil
}

// setTokenCookie trades a token in the URL for the session cookie and
// redirects to the same page without it, so the token leaves the address
// bar. HttpOnly: scripts cannot read it; SameSite=Strict: other sites'
// pages cannot send it; Secure over TLS: never sent in clear afterwards.
func setTokenCookie(w http.ResponseWriter, r *http.Request, session string) {
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: session, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	q := r.URL.Query()
	q.Del("token")
	u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

// readOnly refuses every method but GET and HEAD: no endpoint changes
// anything, and a refused method is visible as such.
func readOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "405 method not allowed: torchmem serve is read-only", http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// securityHeaders keep pages from being framed or sniffed and scripts to
// the agent's own files.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}
