package awstest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/awsconf/sdkconfig"
)

// A machine's AWS setup (a profile in its shared files, a region, a service's endpoint, the
// instance metadata service) does not reach the SDK's default chain once a test isolates
// it: the chain finds the test's key and region, and nothing else.
func TestIsolateHidesTheMachinesSetup(t *testing.T) {
	home := t.TempDir()
	creds := filepath.Join(home, "credentials")
	if err := os.WriteFile(creds, []byte("[team]\naws_access_key_id = AKIDMACHINE\naws_secret_access_key = machine-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"AWS_SHARED_CREDENTIALS_FILE": creds, "AWS_PROFILE": "team", "AWS_REGION": "eu-west-3",
		"AWS_ENDPOINT_URL_DYNAMODB": "http://192.0.2.1", "AWS_EC2_METADATA_DISABLED": "false",
	} {
		t.Setenv(k, v)
	}
	Isolate(t, "AKIDTEST", "AWS_REGION=us-east-1")

	cfg, err := sdkconfig.Load(context.Background(), awsconf.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil || got.AccessKeyID != "AKIDTEST" {
		t.Errorf("credentials %q, %v; want the test's AKIDTEST", got.AccessKeyID, err)
	}
	if cfg.Region != "us-east-1" {
		t.Errorf("region %q, want the test's us-east-1", cfg.Region)
	}
	for _, k := range []string{"AWS_PROFILE", "AWS_ENDPOINT_URL_DYNAMODB"} {
		if v := os.Getenv(k); v != "" {
			t.Errorf("%s = %q after Isolate", k, v)
		}
	}
	if os.Getenv("AWS_SHARED_CREDENTIALS_FILE") == creds || os.Getenv("AWS_EC2_METADATA_DISABLED") != "true" {
		t.Error("the machine's credentials file or the metadata service is still in reach")
	}
}
