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
	return awsconfig.LoadDefaultConfig(ctx, opts...)
}

var _ awsconf.Loader = Load
