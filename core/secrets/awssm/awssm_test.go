package awssm

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/internal/awstest"
	"github.com/fngate/fngate/internal/emulator"
)

func motoClient(url string) *secretsmanager.Client {
	return secretsmanager.New(secretsmanager.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		BaseEndpoint: aws.String(url),
	})
}

// countingAPI counts the GetSecretValue calls that reach Secrets Manager.
type countingAPI struct {
	API
	calls atomic.Int32
}

func (c *countingAPI) GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	c.calls.Add(1)
	return c.API.GetSecretValue(ctx, in, optFns...)
}

func TestResolveAgainstMoto(t *testing.T) {
	url := emulator.Moto(t)
	ctx := context.Background()
	client := motoClient(url)
	create := func(in *secretsmanager.CreateSecretInput) string {
		out, err := client.CreateSecret(ctx, in)
		if err != nil {
			t.Fatalf("CreateSecret %s: %v", *in.Name, err)
		}
		return *out.ARN
	}
	create(&secretsmanager.CreateSecretInput{Name: aws.String("fngate/plain"), SecretString: aws.String("sk-plain")})
	jsonARN := create(&secretsmanager.CreateSecretInput{Name: aws.String("fngate/providers"),
		SecretString: aws.String(`{"openai":"sk-openai","anthropic":"sk-ant","port":8443,"debug":true,"nested":{"a":1}}`)})
	create(&secretsmanager.CreateSecretInput{Name: aws.String("fngate/binary"), SecretBinary: []byte("bin-value")})

	api := &countingAPI{API: client}
	r := New(api)
	for _, tc := range []struct{ ref, want string }{
		{"aws-sm://fngate/plain", "sk-plain"},
		{"aws-sm://fngate/providers#openai", "sk-openai"},
		{"aws-sm://fngate/providers#anthropic", "sk-ant"},
		{"aws-sm://fngate/providers#port", "8443"},
		{"aws-sm://fngate/providers#debug", "true"},
		{"aws-sm://" + jsonARN + "#openai", "sk-openai"},
		{"aws-sm://fngate/binary", "bin-value"},
		{"aws-sm://fngate/plain", "sk-plain"},
	} {
		got, err := r.Resolve(ctx, tc.ref)
		if err != nil {
			t.Errorf("Resolve(%s): %v", tc.ref, err)
			continue
		}
		if got != tc.want {
			t.Errorf("Resolve(%s) = %q, want %q", tc.ref, got, tc.want)
		}
	}
	// plain, providers (two keys plus three more), the ARN (a different id), binary.
	if n := api.calls.Load(); n != 4 {
		t.Errorf("GetSecretValue was called %d times, want 4 (once per distinct secret id)", n)
	}

	for _, tc := range []struct{ ref, wantErr string }{
		{"aws-sm://fngate/missing", "fngate/missing"},
		{"aws-sm://fngate/providers#nope", `no key "nope" (it has: anthropic, debug, nested, openai, port)`},
		{"aws-sm://fngate/providers#nested", "not a string, number or boolean"},
		{"aws-sm://fngate/plain#key", "not"},
	} {
		_, err := r.Resolve(ctx, tc.ref)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("Resolve(%s) error = %v, want one containing %q", tc.ref, err, tc.wantErr)
		}
		if err != nil && strings.Contains(err.Error(), "sk-") {
			t.Errorf("Resolve(%s) error leaks a secret value: %v", tc.ref, err)
		}
	}
	// A failed fetch is not cached: the secret created afterwards resolves.
	create(&secretsmanager.CreateSecretInput{Name: aws.String("fngate/missing"), SecretString: aws.String("late")})
	if got, err := r.Resolve(ctx, "aws-sm://fngate/missing"); err != nil || got != "late" {
		t.Errorf("Resolve after the secret was created = %q, %v; want late", got, err)
	}
}

// TestClientFromEnvironment proves the resolver builds its client from the standard AWS
// environment (region, credentials, endpoint override) with both loaders: the full SDK chain
// (local server) and the environment-only one the Lambda bootstrap uses.
func TestClientFromEnvironment(t *testing.T) {
	url := emulator.Moto(t)
	if _, err := motoClient(url).CreateSecret(context.Background(), &secretsmanager.CreateSecretInput{
		Name: aws.String("env/secret"), SecretString: aws.String(`{"k":"v"}`)}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		load        awsconf.Loader
		endpointVar string
	}{
		{"sdk default chain", sdkconfig.Load, "AWS_ENDPOINT_URL_SECRETS_MANAGER"},
		{"environment only", awsconf.FromEnvironment, "AWS_ENDPOINT_URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			awstest.Isolate(t, "test", "AWS_REGION=us-east-1", tc.endpointVar+"="+url)
			got, err := NewWith(tc.load).Resolve(context.Background(), "aws-sm://env/secret#k")
			if err != nil || got != "v" {
				t.Fatalf("Resolve = %q, %v; want v", got, err)
			}
		})
	}
}

func TestParseRef(t *testing.T) {
	for _, tc := range []struct{ ref, id, key, err string }{
		{ref: "aws-sm://name", id: "name"},
		{ref: "aws-sm://path/to/name#api_key", id: "path/to/name", key: "api_key"},
		{ref: "aws-sm://arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/x-AbCdEf#k",
			id: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/x-AbCdEf", key: "k"},
		{ref: "aws-sm://", err: "names no secret"},
		{ref: "aws-sm://#k", err: "names no secret"},
		{ref: "aws-sm://name#", err: "empty JSON key"},
		{ref: "gcp-sm://projects/p/secrets/s", err: "not an aws-sm:// reference"},
	} {
		id, key, err := ParseRef(tc.ref)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseRef(%q) error = %v, want %q", tc.ref, err, tc.err)
			}
			continue
		}
		if err != nil || id != tc.id || key != tc.key {
			t.Errorf("ParseRef(%q) = %q, %q, %v; want %q, %q", tc.ref, id, key, err, tc.id, tc.key)
		}
	}
}
