package modelarmorfake

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
)

// One key for every fake of the process: generating an RSA key takes tens of milliseconds.
var (
	keyOnce sync.Once
	keyPEM  []byte
)

func privateKey() []byte {
	keyOnce.Do(func() {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic("modelarmorfake: " + err.Error())
		}
		der, _ := x509.MarshalPKCS8PrivateKey(key)
		keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	})
	return keyPEM
}

// ServiceAccount is a service account key whose token endpoint is the fake's: credentials
// made from it get the fake's token by the real OAuth flow (a signed JWT exchanged at
// token_uri), so nothing reaches a Google host.
func (s *Server) ServiceAccount() []byte {
	b, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "fngate-test", "private_key_id": "fake-key-1",
		"private_key": string(privateKey()), "client_email": "gateway@fngate-test.iam.gserviceaccount.com",
		"client_id": "1", "token_uri": s.srv.URL + "/token",
	})
	return b
}

// ServiceAccountFile writes ServiceAccount to a file of the test's, for
// GOOGLE_APPLICATION_CREDENTIALS (Application Default Credentials).
func (s *Server) ServiceAccountFile(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model-armor-sa.json")
	if err := os.WriteFile(path, s.ServiceAccount(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Credentials are credentials from ServiceAccount, for modelarmor.Options.Credentials.
func (s *Server) Credentials(t testing.TB) *auth.Credentials {
	t.Helper()
	creds, err := credentials.NewCredentialsFromJSON(credentials.ServiceAccount, s.ServiceAccount(),
		&credentials.DetectOptions{Scopes: []string{"https://www.googleapis.com/auth/cloud-platform"}})
	if err != nil {
		t.Fatal(err)
	}
	return creds
}

// token is the OAuth token endpoint: a JWT-bearer grant gets the fake's access token.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || r.Form.Get("assertion") == "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"Invalid JWT grant."}`))
		return
	}
	s.mu.Lock()
	s.tokens++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	b, _ := json.Marshal(map[string]any{"access_token": s.opts.Token, "token_type": "Bearer", "expires_in": 3600})
	_, _ = w.Write(b)
}

// Isolate keeps a test's Google credential lookup off the machine and the network: no
// credentials file (GOOGLE_APPLICATION_CREDENTIALS names one that does not exist; HOME and
// CLOUDSDK_CONFIG are empty directories) and the GCE metadata server at a closed loopback
// port, so Application Default Credentials fail at once unless the test sets them.
func Isolate(t testing.TB) {
	t.Helper()
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	for k, v := range map[string]string{
		"GOOGLE_APPLICATION_CREDENTIALS": filepath.Join(dir, "no-credentials.json"),
		"HOME":                           dir,
		"CLOUDSDK_CONFIG":                dir,
		"GCE_METADATA_HOST":              closed,
		"GCE_METADATA_IP":                closed,
	} {
		t.Setenv(k, v)
	}
}
