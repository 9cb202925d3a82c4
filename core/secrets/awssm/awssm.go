// Package awssm resolves aws-sm://<secret-id>[#json-key] references through AWS Secrets
// Manager. The secret id is a name or a full ARN; #json-key picks one key of a secret that
// holds a JSON object (the console's key/value secrets). Each secret is fetched once per
// process, however many keys of it the config uses.
package awssm

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/secrets"
)

// Scheme is the reference prefix this resolver serves (the key in config.Options.Secrets).
const Scheme = config.SchemeAWS

// API is the one Secrets Manager call the resolver makes; *secretsmanager.Client has it.
type API interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// Resolver resolves aws-sm:// references. Safe for concurrent use.
type Resolver struct {
	api   func(context.Context) (API, error)
	cache secrets.Cache
}

// New resolves through api.
func New(api API) *Resolver {
	return &Resolver{api: func(context.Context) (API, error) { return api, nil }}
}

// NewWith resolves through a client built from the configuration load returns (on Lambda the
// function role's credentials in the environment; elsewhere the SDK's default chain). The
// client is built on the first reference, so a config without aws-sm:// references pays
// nothing at cold start.
func NewWith(load awsconf.Loader) *Resolver {
	return &Resolver{api: secrets.Lazy(func(ctx context.Context) (API, error) {
		cfg, err := load(ctx, awsconf.Options{})
		if err != nil {
			return nil, fmt.Errorf("loading the AWS configuration: %w", err)
		}
		return secretsmanager.NewFromConfig(cfg), nil
	})}
}

// ParseRef splits a reference into the secret id and the optional JSON key. The shapes are
// config's (config.ParseSecretRef), which refuses malformed references at load time.
func ParseRef(ref string) (id, key string, err error) {
	r, ok, err := config.ParseSecretRef(ref)
	switch {
	case err != nil:
		return "", "", err
	case !ok || r.Scheme != Scheme:
		return "", "", fmt.Errorf("%q is not an %s:// reference", ref, Scheme)
	}
	return r.Name, r.Key, nil
}

// Resolve returns the secret's value, or one key of it.
func (r *Resolver) Resolve(ctx context.Context, ref string) (string, error) {
	id, key, err := ParseRef(ref)
	if err != nil {
		return "", err
	}
	return r.cache.Resolve(ctx, id, key, func(ctx context.Context) (string, error) { return r.fetch(ctx, id) })
}

func (r *Resolver) fetch(ctx context.Context, id string) (string, error) {
	api, err := r.api(ctx)
	if err != nil {
		return "", err
	}
	out, err := api.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
	if err != nil {
		return "", fmt.Errorf("getting secret %s from Secrets Manager: %w", id, err)
	}
	switch {
	case out.SecretString != nil:
		return *out.SecretString, nil
	case out.SecretBinary != nil:
		return string(out.SecretBinary), nil
	}
	return "", errors.New("secret " + id + " has neither a string nor a binary value")
}
