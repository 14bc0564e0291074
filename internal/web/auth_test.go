package web

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testToken = "s3cret-token-0123456789"

func TestAuthRequiresToken(t *testing.T) {
	f := newFixture(t, fixtureOpts{token: testToken, samples: 10})
	for _, path := range []string{"/", "/runs", "/api/v1/node", "/api/v1/runs", "/api/v1/stream", "/metrics", "/static/app.js", "/runs/" + f.running + "/report.html"} {
		if resp := f.get(t, path, ""); resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("GET %s without token: %d", path, resp.StatusCode)
		}
		if resp := f.get(t, path, "wrong-token-0123456789"); resp.StatusCode != 401 {
			t.Errorf("GET %s with a wrong token: %d", path, resp.StatusCode)
		}
	}
	for _, path := range []string{"/", "/api/v1/node", "/api/v1/runs", "/metrics"} {
		if resp := f.get(t, path, testToken); resp.StatusCode != 200 {
			t.Errorf("GET %s with the token: %d", path, resp.StatusCode)
		}
	}
	if resp := f.get(t, "/healthz", ""); resp.StatusCode != 200 {
		t.Errorf("/healthz (probes) without token: %d", resp.StatusCode)
	}
	// The token in the API's URL is not accepted (it would land in logs).
	if resp := f.get(t, "/api/v1/node?token="+testToken, ""); resp.StatusCode != 401 {
		t.Errorf("API with ?token=: %d", resp.StatusCode)
	}
}

// TestAuthBrowserCookie: /?token= trades the token for a cookie and
// redirects to the page without it; the cookie then opens everything.
func TestAuthBrowserCookie(t *testing.T) {
	f := newFixture(t, fixtureOpts{token: testToken, samples: 10})
	resp := f.get(t, "/runs?token="+testToken, "")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/runs" {
		t.Fatalf("token visit: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == tokenCookie {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Secure {
		t.Fatalf("cookie = %+v (want HttpOnly, SameSite=Strict, not Secure over plain HTTP)", cookie)
	}
	if strings.Contains(cookie.Value, testToken) {
		t.Fatalf("cookie holds the raw token: %q", cookie.Value)
	}
	req, _ := http.NewRequest("GET", f.url+"/api/v1/node", nil)
	req.AddCookie(cookie)
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != 200 {
		t.Errorf("API with the cookie: %d", r2.StatusCode)
	}
}

func TestAuthMetricsExempt(t *testing.T) {
	f := newFixture(t, fixtureOpts{token: testToken, metricsNoAuth: true, samples: 10})
	if resp := f.get(t, "/metrics", ""); resp.StatusCode != 200 {
		t.Errorf("/metrics exempt: %d", resp.StatusCode)
	}
	if resp := f.get(t, "/api/v1/node", ""); resp.StatusCode != 401 {
		t.Errorf("API still needs the token: %d", resp.StatusCode)
	}
}

func TestLoopbackNeedsNoToken(t *testing.T) {
	f := newFixture(t, fixtureOpts{samples: 10})
	for _, path := range []string{"/", "/api/v1/node", "/metrics"} {
		if resp := f.get(t, path, ""); resp.StatusCode != 200 {
			t.Errorf("GET %s: %d", path, resp.StatusCode)
		}
	}
}

func TestReadOnly(t *testing.T) {
	f := newFixture(t, fixtureOpts{samples: 10})
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		for _, path := range []string{"/", "/api/v1/runs/" + f.running, "/metrics"} {
			req, _ := http.NewRequest(m, f.url+path, strings.NewReader("{}"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: %d", m, path, resp.StatusCode)
			}
		}
	}
}

func TestCheckListen(t *testing.T) {
	for _, c := range []struct {
		addr      string
		a         Access
		err, warn bool
	}{
		{"127.0.0.1:10464", Access{}, false, false},
		{"[::1]:10464", Access{}, false, false},
		{"localhost:10464", Access{Token: true}, false, false},
		{":10464", Access{}, true, false},
		{"0.0.0.0:10464", Access{}, true, false},
		{"10.1.2.3:10464", Access{Token: true, TLS: true}, false, false},
		{"10.1.2.3:10464", Access{BasicAuth: true, TLS: true}, false, false},
		{"10.1.2.3:10464", Access{Token: true}, false, true},     // token in clear: warned
		{"10.1.2.3:10464", Access{BasicAuth: true}, false, true}, // password in clear: warned
		{"10.1.2.3:10464", Access{TLS: true}, true, false},       // TLS is no authentication
		{"0.0.0.0:10464", Access{Insecure: true}, false, true},
		{"nonsense", Access{}, true, false},
	} {
		warn, err := CheckListen(c.addr, c.a)
		if (err != nil) != c.err || (warn != "") != c.warn {
			t.Errorf("CheckListen(%q, %+v) = %q, %v", c.addr, c.a, warn, err)
		}
	}
}

func TestReadToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if tok, err := ReadToken(write("ok", testToken+"\n", 0o600)); err != nil || tok != testToken {
		t.Errorf("ReadToken = %q, %v", tok, err)
	}
	for name, p := range map[string]string{
		"world-readable": write("wr", testToken, 0o644), "short": write("short", "abc\n", 0o600), "missing": filepath.Join(dir, "none"),
	} {
		if _, err := ReadToken(p); err == nil {
			t.Errorf("%s token file accepted", name)
		}
	}
}
