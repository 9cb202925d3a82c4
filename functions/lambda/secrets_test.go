package main

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/fngate/fngate/internal/emulator"
	"github.com/fngate/fngate/internal/fakeruntime"
)

// TestSecretsResolvedOnceAtColdStart runs the bootstrap against Secrets Manager (moto): the
// gateway key and the provider key come from aws-sm:// references, and deleting the secrets
// after the cold start changes nothing, because they were read once, before the first invoke.
func TestSecretsResolvedOnceAtColdStart(t *testing.T) {
	moto := emulator.Moto(t)
	sm := secretsmanager.New(secretsmanager.Options{Region: "us-east-1", BaseEndpoint: aws.String(moto),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	ctx := context.Background()
	for name, val := range map[string]string{"fngate/gateway": `{"app":"gw-key-1"}`, "fngate/upstream": "sk-upstream"} {
		if _, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String(name), SecretString: aws.String(val)}); err != nil {
			t.Fatal(err)
		}
	}
	up := newUpstream(t)
	cfg := `
keys: [{name: app, value: "aws-sm://fngate/gateway#app"}]
connections:
  up: {kind: openai-compatible, base_url: "${UPSTREAM_URL}/v1", api_key: "aws-sm://fngate/upstream"}
models: {m: {routes: [{connection: up, model: paced}]}}
`
	in := start(t, "FNGATE_CONFIG_YAML="+cfg, "UPSTREAM_URL="+up.URL, "FNGATE_URL_AUTH_TYPE=NONE",
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_ENDPOINT_URL="+moto,
		"AWS_EC2_METADATA_DISABLED=true")

	ask := func(key string) int {
		ev := fakeruntime.URLEvent("POST", "/v1/chat/completions", map[string]string{"authorization": "Bearer " + key},
			`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
		_, p, _ := in.invoke(t, fakeruntime.Request{Event: ev})
		return p.StatusCode
	}
	if s := ask("gw-key-1"); s != 200 {
		t.Fatalf("with the key from Secrets Manager: status %d", s)
	}
	if s := ask("wrong"); s != 401 {
		t.Errorf("with a wrong key: status %d, want 401", s)
	}
	for _, name := range []string{"fngate/gateway", "fngate/upstream"} {
		if _, err := sm.DeleteSecret(ctx, &secretsmanager.DeleteSecretInput{SecretId: aws.String(name), ForceDeleteWithoutRecovery: aws.Bool(true)}); err != nil {
			t.Fatal(err)
		}
	}
	if s := ask("gw-key-1"); s != 200 {
		t.Errorf("after the secrets were deleted: status %d; they must have been cached at cold start", s)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	for i, a := range up.auth {
		if a != "Bearer sk-upstream" {
			t.Errorf("upstream request %d had Authorization %q, want the provider key from Secrets Manager", i, a)
		}
	}
}
