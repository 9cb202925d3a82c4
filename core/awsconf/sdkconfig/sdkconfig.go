// Package sdkconfig is the awsconf.Loader over the SDK's full default configuration chain:
// environment, shared config and credentials files with profiles, SSO, web identity, ECS and
// EC2 instance roles. See awsconf for why it is a separate package.
package sdkconfig

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/fngate/fngate/core/awsconf"
)

// Load is an awsconf.Loader.
func Load(ctx context.Context, o awsconf.Options) (aws.Config, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if o.Region != "" {
		opts = append(opts, awsconfig.WithRegion(o.Region))
	}
	if o.Profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(o.Profile))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return cfg, err
	}
	// Wrapped after loading: the loader puts AWS_CA_BUNDLE into its own client, which it
	// must be able to recognise.
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = awsconf.HTTPClient()
	} else {
		cfg.HTTPClient = awsconf.SafeBodies(cfg.HTTPClient)
	}
	return cfg, nil
}

var _ awsconf.Loader = Load
