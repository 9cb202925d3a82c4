// Package awstest keeps the AWS SDK of code a test runs in its own process (a gateway with a
// Bedrock route, a DynamoDB or Secrets Manager client, a local server the test starts) off
// the machine's AWS setup: Isolate gives it static credentials and hides the rest of what
// the SDK's default chain reads, so a test depends on nothing of the machine's and signs
// only what it means to.
package awstest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Isolate gives the test static credentials from the environment (accessKeyID, with a fake
// secret) and hides everything else the AWS SDK's default chain would read: every AWS_
// variable of the machine (profiles, regions, endpoints, API keys, container and web
// identity credentials, retry settings), the shared config and credentials files (pointed
// into an empty directory) and the instance metadata service. env, as KEY=VALUE, is set
// last: a region, an endpoint (moto's, a fake's, or a closed port so that a client the test
// did not point anywhere fails at once instead of reaching AWS), other credentials.
func Isolate(t testing.TB, accessKeyID string, env ...string) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
			t.Setenv(k, "")
		}
	}
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID":           accessKeyID,
		"AWS_SECRET_ACCESS_KEY":       "fake-secret",
		"AWS_CONFIG_FILE":             filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED":   "true",
	} {
		t.Setenv(k, v)
	}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("awstest.Isolate: %q is not KEY=VALUE", kv)
		}
		t.Setenv(k, v)
	}
}
