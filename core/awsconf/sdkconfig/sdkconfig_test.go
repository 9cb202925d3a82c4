package sdkconfig

import (
	"context"
	"fmt"
	"testing"

	"github.com/fngate/fngate/core/awsconf"
)

// The full chain's clients send their bodies through awsconf.SafeBodies too.
func TestLoadUsesSafeBodies(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
	cfg, err := Load(context.Background(), awsconf.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprintf("%T", cfg.HTTPClient), fmt.Sprintf("%T", awsconf.HTTPClient()); got != want {
		t.Errorf("HTTP client %s, want %s", got, want)
	}
}
