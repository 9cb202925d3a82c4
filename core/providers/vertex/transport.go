package vertex

import (
	"context"
	"sync/atomic"

	"cloud.google.com/go/aiplatform/apiv1"
	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/fngate/fngate/core/providers"
)

// scope is what every Vertex AI call needs.
const scope = "https://www.googleapis.com/auth/cloud-platform"

// credentials returns the connection's Application Default Credentials, found on first use.
// The gRPC client and the REST calls share them, so there is one token cache per
// connection. A failed lookup is not remembered: the next call tries again (a metadata
// server that was slow to answer at start-up should not take the route down for good).
func (p *Provider) credentials() (*auth.Credentials, error) {
	if c := p.creds.Load(); c != nil {
		return c, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.credentialsLocked()
}

func (p *Provider) credentialsLocked() (*auth.Credentials, error) {
	if c := p.creds.Load(); c != nil {
		return c, nil
	}
	c, err := credentials.DetectDefault(&credentials.DetectOptions{Scopes: []string{scope}})
	if err != nil {
		return nil, &providers.Error{Class: providers.Auth, Provider: Name, Err: err,
			Message: "no usable Application Default Credentials: " + err.Error()}
	}
	p.creds.Store(c)
	return c, nil
}

// predictionClient returns the connection's gRPC client, made on first use and shared by
// every call after (it is safe for concurrent use and pools its connection).
func (p *Provider) predictionClient() (*aiplatform.PredictionClient, error) {
	return lazyClient(p, &p.client, aiplatform.NewPredictionClient)
}

// utilityClient returns the client of Gemini's token counting (LlmUtilityService), made on
// the first count, with the same settings.
func (p *Provider) utilityClient() (*aiplatform.LlmUtilityClient, error) {
	return lazyClient(p, &p.utility, aiplatform.NewLlmUtilityClient)
}

// lazyClient returns the client in slot, making it with newClient on first use.
func lazyClient[C any](p *Provider, slot *atomic.Pointer[C], newClient func(context.Context, ...option.ClientOption) (*C, error)) (*C, error) {
	if c := slot.Load(); c != nil {
		return c, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := slot.Load(); c != nil {
		return c, nil
	}
	opts, err := p.clientOptions()
	if err != nil {
		return nil, err
	}
	// The client outlives the request that happened to make it: never tie it to that
	// request's cancellation. Its default call options carry no retries, which is what the
	// gateway wants (it owns retries and failover), so none are added.
	c, err := newClient(context.Background(), opts...)
	if err != nil {
		return nil, &providers.Error{Class: providers.Unavailable, Provider: Name, Err: err,
			Message: "cannot create the Vertex AI client: " + err.Error()}
	}
	slot.Store(c)
	return c, nil
}

// clientOptions are the gRPC clients' settings; p.mu is held.
func (p *Provider) clientOptions() ([]option.ClientOption, error) {
	// The generated clients raise gRPC's receive limit to math.MaxInt32 (2 GB) per message:
	// an upstream could make the gateway buffer that much for one answer. Dial options come
	// after the clients' defaults, so this limit wins; an answer above it fails the call
	// (see callError) instead of taking the instance's memory.
	opts := []option.ClientOption{option.WithEndpoint(p.grpcEndpoint),
		option.WithGRPCDialOption(grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(p.maxRecv)))}
	if p.insecure {
		// Without WithoutAuthentication the client would look for credentials (and may probe
		// the GCE metadata server); without plaintext transport credentials it would speak
		// TLS to a fake that does not.
		return append(opts, option.WithoutAuthentication(),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials()))), nil
	}
	creds, err := p.credentialsLocked()
	if err != nil {
		return nil, err
	}
	return append(opts, option.WithAuthCredentials(creds)), nil
}

// bearer returns the Authorization value for REST calls, "" on an insecure connection.
func (p *Provider) bearer(ctx context.Context) (string, error) {
	if p.insecure {
		return "", nil
	}
	creds, err := p.credentials()
	if err != nil {
		return "", err
	}
	tok, err := creds.Token(ctx)
	if err != nil {
		if context.Cause(ctx) != nil {
			return "", providers.AsError(ctx, err, Name)
		}
		return "", &providers.Error{Class: providers.Auth, Provider: Name, Err: err,
			Message: "cannot get an access token: " + err.Error()}
	}
	return "Bearer " + tok.Value, nil
}
