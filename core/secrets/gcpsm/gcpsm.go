// Package gcpsm resolves gcp-sm://projects/<p>/secrets/<s>/versions/<v>[#json-key] references
// through Google Cloud Secret Manager. Leaving out /versions/<v> means the latest version;
// #json-key picks one key of a secret that holds a JSON object. Each secret version is read
// once per process, and its CRC32C checksum is verified when the service sends one.
package gcpsm

import (
	"context"
	"fmt"
	"hash/crc32"

	secretmanager "cloud.google.com/go/secretmanager/apiv1"
	"cloud.google.com/go/secretmanager/apiv1/secretmanagerpb"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/option"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/secrets"
)

// Scheme is the reference prefix this resolver serves (the key in config.Options.Secrets).
const Scheme = config.SchemeGCP

// API is the one Secret Manager call the resolver makes; *secretmanager.Client has it.
type API interface {
	AccessSecretVersion(ctx context.Context, req *secretmanagerpb.AccessSecretVersionRequest, opts ...gax.CallOption) (*secretmanagerpb.AccessSecretVersionResponse, error)
}

// Resolver resolves gcp-sm:// references. Safe for concurrent use.
type Resolver struct {
	api   func(context.Context) (API, error)
	cache secrets.Cache
}

// New resolves through api.
func New(api API) *Resolver {
	return &Resolver{api: func(context.Context) (API, error) { return api, nil }}
}

// NewDefault resolves through a client built with Application Default Credentials (the
// function's service account) and opts. The client is built on the first reference, so a
// config without gcp-sm:// references pays nothing at cold start.
func NewDefault(opts ...option.ClientOption) *Resolver {
	return &Resolver{api: secrets.Lazy(func(ctx context.Context) (API, error) {
		c, err := secretmanager.NewClient(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("creating the Secret Manager client: %w", err)
		}
		return c, nil
	})}
}

// ParseRef returns the full version resource name and the optional JSON key of a reference.
// The shapes are config's (config.ParseSecretRef), which refuses malformed references at load
// time.
func ParseRef(ref string) (version, key string, err error) {
	r, ok, err := config.ParseSecretRef(ref)
	switch {
	case err != nil:
		return "", "", err
	case !ok || r.Scheme != Scheme:
		return "", "", fmt.Errorf("%q is not a %s:// reference", ref, Scheme)
	}
	return r.Name, r.Key, nil
}

// Resolve returns the secret version's payload, or one key of it.
func (r *Resolver) Resolve(ctx context.Context, ref string) (string, error) {
	version, key, err := ParseRef(ref)
	if err != nil {
		return "", err
	}
	return r.cache.Resolve(ctx, version, key, func(ctx context.Context) (string, error) { return r.fetch(ctx, version) })
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (r *Resolver) fetch(ctx context.Context, version string) (string, error) {
	api, err := r.api(ctx)
	if err != nil {
		return "", err
	}
	resp, err := api.AccessSecretVersion(ctx, &secretmanagerpb.AccessSecretVersionRequest{Name: version})
	if err != nil {
		return "", fmt.Errorf("accessing %s in Secret Manager: %w", version, err)
	}
	p := resp.GetPayload()
	if p.DataCrc32C != nil && int64(crc32.Checksum(p.GetData(), castagnoli)) != p.GetDataCrc32C() {
		return "", fmt.Errorf("accessing %s in Secret Manager: the payload does not match its CRC32C checksum", version)
	}
	return string(p.GetData()), nil
}
