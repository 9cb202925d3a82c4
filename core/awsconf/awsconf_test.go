package awsconf

import (
	"context"
	"testing"
)

func TestFromEnvironment(t *testing.T) {
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "eu-west-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "token")
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")
	cfg, err := FromEnvironment(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	creds, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil || creds.AccessKeyID != "AKIDEXAMPLE" || creds.SessionToken != "token" {
		t.Errorf("credentials %+v %v", creds, err)
	}
	if cfg.Region != "eu-west-1" || *cfg.BaseEndpoint != "http://127.0.0.1:4566" {
		t.Errorf("region %q endpoint %v", cfg.Region, cfg.BaseEndpoint)
	}
	if cfg, _ := FromEnvironment(context.Background(), Options{Region: "us-west-2"}); cfg.Region != "us-west-2" {
		t.Errorf("the connection's region does not win: %q", cfg.Region)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	if cfg, _ := FromEnvironment(context.Background(), Options{}); cfg.Credentials != nil {
		t.Error("credentials made up from an empty environment")
	}
	if _, err := FromEnvironment(context.Background(), Options{Profile: "team"}); err == nil {
		t.Error("a profile was accepted without the shared files")
	}
}
