package sdkconfig

import (
	"context"
	"fmt"
	"testing"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/internal/awstest"
)

// The full chain's clients send their bodies through awsconf.SafeBodies too.
func TestLoadUsesSafeBodies(t *testing.T) {
	awstest.Isolate(t, "", "AWS_REGION=us-east-1")
	cfg, err := Load(context.Background(), awsconf.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprintf("%T", cfg.HTTPClient), fmt.Sprintf("%T", awsconf.HTTPClient()); got != want {
		t.Errorf("HTTP client %s, want %s", got, want)
	}
}
