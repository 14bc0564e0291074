package web

// --web.config.file is the Prometheus exporters' web configuration
// (exporter-toolkit; node_exporter reads the same file):
//
//	tls_server_config:
//	  cert_file: /etc/torchmem/tls.crt
//	  key_file: /etc/torchmem/tls.key
//	basic_auth_users:
//	  prometheus: $2y$10$...   # bcrypt hash (htpasswd -nBC 10 "" | tr -d ':')

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	toolkitweb "github.com/prometheus/exporter-toolkit/web"
	"gopkg.in/yaml.v3"
)

// WebConfig is what a web configuration file turns on.
type WebConfig struct {
	TLS       bool // tls_server_config names a certificate
	BasicAuth bool // basic_auth_users is not empty
}

// webConfigKeys are the fields ReadWebConfig needs to know what is on;
// exporter-toolkit parses the whole file itself.
type webConfigKeys struct {
	TLS struct {
		Cert     string `yaml:"cert"`
		CertFile string `yaml:"cert_file"`
	} `yaml:"tls_server_config"`
	Users map[string]string `yaml:"basic_auth_users"`
}

// ReadWebConfig checks path as exporter-toolkit will serve it (YAML keys,
// certificate and key loaded, users' bcrypt hashes) and says whether it
// turns on TLS and basic auth. Errors name the flag and the file.
func ReadWebConfig(path string) (WebConfig, error) {
	if err := toolkitweb.Validate(path); err != nil {
		return WebConfig{}, fmt.Errorf("--web.config.file %s: %w", path, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return WebConfig{}, fmt.Errorf("--web.config.file: %w", err)
	}
	var k webConfigKeys
	if err := yaml.Unmarshal(b, &k); err != nil {
		return WebConfig{}, fmt.Errorf("--web.config.file %s: %w", path, err)
	}
	return WebConfig{TLS: k.TLS.Cert != "" || k.TLS.CertFile != "", BasicAuth: len(k.Users) > 0}, nil
}

// toolkitLogger passes exporter-toolkit's warnings and errors (a config
// that no longer parses) to Logf; its start-up notes ("Listening on",
// "TLS is enabled") say what serve prints itself.
func (s *Server) toolkitLogger() *slog.Logger {
	return slog.New(logfHandler{logf: s.cfg.Logf})
}

// logfHandler is a slog.Handler over Logf, at warning level and above.
type logfHandler struct {
	logf  func(format string, args ...any)
	attrs []slog.Attr
}

func (h logfHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h logfHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("web config: " + r.Message)
	add := func(a slog.Attr) bool { fmt.Fprintf(&b, " %s=%v", a.Key, a.Value); return true }
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	h.logf("%s", b.String())
	return nil
}

func (h logfHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return logfHandler{logf: h.logf, attrs: append(append([]slog.Attr{}, h.attrs...), as...)}
}

func (h logfHandler) WithGroup(string) slog.Handler { return h }

// serverLog is the http.Server's error log over Logf, without failed TLS
// handshakes: any port scanner or plain-HTTP client makes one, and the
// client, not the agent's log, is where they are seen.
type serverLog struct {
	logf func(format string, args ...any)
}

func (l serverLog) Write(p []byte) (int, error) {
	if msg := strings.TrimSpace(string(p)); !strings.Contains(msg, "TLS handshake error") {
		l.logf("%s", msg)
	}
	return len(p), nil
}
