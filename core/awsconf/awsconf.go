// Package awsconf builds the aws.Config of fngate's AWS clients (Bedrock, Secrets Manager,
// DynamoDB, EventBridge) through a Loader the platform main chooses.
//
// Two loaders exist because of binary size: the SDK's full default chain (package
// sdkconfig: shared files, profiles, SSO, IMDS, web identity...) adds about 4 MB to a binary,
// while a Lambda function only ever needs what its runtime puts in the environment. The
// Lambda bootstrap uses FromEnvironment; the local server and Cloud Functions use sdkconfig.
// Both give their clients HTTPClient (httpclient.go), whose bodies cannot race the SDK.
package awsconf

import (
	"context"
	"errors"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Options select what a Loader builds.
type Options struct {
	Region  string // empty: AWS_REGION, then AWS_DEFAULT_REGION
	Profile string // a shared-config profile; only the full chain knows profiles
}

// Loader builds an aws.Config. It reads local sources only (environment, files); clients
// built from the config contact AWS at their first call.
type Loader func(ctx context.Context, o Options) (aws.Config, error)

// FromEnvironment reads the region and the credentials the Lambda runtime provides
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) and AWS_ENDPOINT_URL. The
// credentials stay nil when the environment has none, so callers that can do without (a
// Bedrock API key) still work and the others can say what is missing.
func FromEnvironment(_ context.Context, o Options) (aws.Config, error) {
	if o.Profile != "" {
		return aws.Config{}, errors.New("profile " + o.Profile + " needs the shared config files, which this binary does not read: use environment credentials")
	}
	cfg := aws.Config{Region: firstSet(o.Region, os.Getenv("AWS_REGION"), os.Getenv("AWS_DEFAULT_REGION")), HTTPClient: HTTPClient()}
	if id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"); id != "" && secret != "" {
		cfg.Credentials = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, os.Getenv("AWS_SESSION_TOKEN")))
	}
	if ep := os.Getenv("AWS_ENDPOINT_URL"); ep != "" {
		cfg.BaseEndpoint = aws.String(ep)
	}
	return cfg, nil
}

func firstSet(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
