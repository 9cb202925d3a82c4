package bedrock

import (
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/fngate/fngate/core/awsconf/sdkconfig"
)

// testNew builds providers the way the local server does, over the SDK's full chain.
var testNew = Factory(sdkconfig.Load)

// IsolateAWS gives a test static credentials from the environment and hides everything else
// the SDK's default chain would read (shared files, profiles, API keys, the instance
// metadata service), so no test depends on the machine or reaches the network.
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

func typesStopReason(s string) types.StopReason { return types.StopReason(s) }
