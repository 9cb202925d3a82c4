package bedrockfake

import (
	"path/filepath"
	"testing"
)

// IsolateAWS gives a test static credentials from the environment and hides everything else
// the AWS SDK's default chain would read (shared files, profiles, API keys, the instance
// metadata service), so a gateway the test serves in-process signs its calls to this fake
// with accessKeyID and depends on nothing of the machine's.
func IsolateAWS(t testing.TB, accessKeyID string) {
	t.Helper()
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID":                      accessKeyID,
		"AWS_SECRET_ACCESS_KEY":                  "fake-secret",
		"AWS_SESSION_TOKEN":                      "",
		"AWS_PROFILE":                            "",
		"AWS_DEFAULT_PROFILE":                    "",
		"AWS_REGION":                             "",
		"AWS_DEFAULT_REGION":                     "",
		"AWS_CONFIG_FILE":                        filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE":            filepath.Join(dir, "credentials"),
		"AWS_BEARER_TOKEN_BEDROCK":               "",
		"AWS_EC2_METADATA_DISABLED":              "true",
		"AWS_MAX_ATTEMPTS":                       "",
		"AWS_RETRY_MODE":                         "",
		"AWS_ENDPOINT_URL":                       "",
		"AWS_ENDPOINT_URL_BEDROCK_RUNTIME":       "",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI":     "",
		"AWS_WEB_IDENTITY_TOKEN_FILE":            "",
		"AWS_ROLE_ARN":                           "",
		"AWS_CA_BUNDLE":                          "",
	} {
		t.Setenv(k, v)
	}
}
