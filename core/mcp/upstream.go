package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/fngate/fngate/core/config"
)

// upstream is one mcp_servers entry: its client session, opened on first use and kept while
// the instance lives (a warm function reuses it), and what it offers.
type upstream struct {
	name string
	cfg  *config.MCPServer
	h    *Handler
	http *http.Client

	mu      sync.Mutex
	session *sdk.ClientSession
	dialing chan struct{} // closed when the dial in flight ends

	catalog catalogCache
}

func newUpstream(h *Handler, name string, cfg *config.MCPServer) *upstream {
	u := &upstream{name: name, cfg: cfg, h: h}
	base := h.opt.Transport
	var creds http.RoundTripper = &credentials{next: base, headers: cfg.Headers, bearer: cfg.BearerToken}
	if o := cfg.OAuth; o != nil {
		resource := o.Resource
		if resource == "" {
			resource = cfg.URL
		}
		cc := clientcredentials.Config{
			ClientID: o.ClientID, ClientSecret: o.ClientSecret, TokenURL: o.TokenURL, Scopes: o.Scopes,
			EndpointParams: map[string][]string{"resource": {resource}},
		}
		// The token source outlives any one request: its own context, with the gateway's
		// transport for the token endpoint.
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Transport: base, Timeout: u.timeout()})
		creds.(*credentials).tokens = oauth2.ReuseTokenSource(nil, cc.TokenSource(ctx))
	}
	u.http = &http.Client{Transport: &tap{next: creds, maxBytes: h.opt.MaxResultBytes}}
	return u
}

func (u *upstream) timeout() time.Duration {
	if t := u.cfg.Timeout.D(); t > 0 {
		return t
	}
	return config.DefaultMCPTimeout
}

// client returns the open session, dialing one when there is none. Concurrent callers wait
// for one dial rather than each opening a session.
func (u *upstream) client(ctx context.Context) (*sdk.ClientSession, error) {
	for {
		u.mu.Lock()
		if s := u.session; s != nil {
			u.mu.Unlock()
			return s, nil
		}
		if wait := u.dialing; wait != nil {
			u.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		u.dialing = done
		u.mu.Unlock()

		s, err := u.dial()
		u.mu.Lock()
		u.dialing = nil
		if err == nil {
			u.session = s
		}
		u.mu.Unlock()
		close(done)
		return s, err
	}
}

// dial opens a session under the server's timeout. The session is the instance's, not the
// request's: it has a context of its own.
func (u *upstream) dial() (*sdk.ClientSession, error) {
	ctx, cancel := context.WithTimeout(context.Background(), u.timeout())
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "fngate", Version: Version}, &sdk.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *sdk.ToolListChangedRequest) { u.catalog.invalidate() },
		PromptListChangedHandler:   func(context.Context, *sdk.PromptListChangedRequest) { u.catalog.invalidate() },
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { u.catalog.invalidate() },
		// No elicitation or sampling handler: the SDK answers an upstream's request for
		// either as unsupported. The client's answer would come back as a new HTTP request,
		// at any instance, long after this call's stream had to stay open for it.
	})
	var transport sdk.Transport
	if u.cfg.Transport == config.MCPTransportSSE {
		transport = &sdk.SSEClientTransport{Endpoint: u.cfg.URL, HTTPClient: u.http, MaxEventSize: int(u.h.opt.MaxResultBytes)}
	} else {
		transport = &sdk.StreamableClientTransport{
			Endpoint: u.cfg.URL, HTTPClient: u.http, MaxEventSize: int(u.h.opt.MaxResultBytes),
			// The gateway owns retries; and a function must not hold a standing GET stream
			// while its environment is frozen between requests.
			MaxRetries: -1, DisableStandaloneSSE: true,
		}
	}
	s, err := c.Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: upstreamVersion})
	if err != nil {
		return nil, fmt.Errorf("connecting: %v", err) // not the SDK's wire error: the server never answered
	}
	if v := s.InitializeResult(); v != nil && v.ProtocolVersion < sessionlessVersion && v.Capabilities != nil && v.Capabilities.Logging != nil {
		// Servers of the versions with sessions log only once a level is set; the gateway
		// asks for everything and each client's own level filters what it is sent.
		_ = s.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "debug"})
	}
	return s, nil
}

// upstreamVersion is the protocol version the gateway asks upstreams for: the newest with
// sessions, which every server deployed today speaks. A stateful server built on the SDK
// announces the sessionless version in server/discover and then refuses its calls.
const upstreamVersion = "2025-11-25"

// drop forgets session s after a failure that may have broken it, so the next call dials.
func (u *upstream) drop(s *sdk.ClientSession) {
	u.mu.Lock()
	if u.session == s {
		u.session = nil
	}
	u.mu.Unlock()
	go s.Close()
}

// close ends the session, if any.
func (u *upstream) close() {
	u.mu.Lock()
	s := u.session
	u.session = nil
	u.mu.Unlock()
	if s != nil {
		s.Close()
	}
}

// credentials puts the server's own credentials on every request to it. They are the only
// credentials the upstream sees: the calls are the gateway's own, made by its MCP client, so
// nothing of the caller's request (its gateway key above all) is forwarded.
type credentials struct {
	next    http.RoundTripper
	headers map[string]string
	bearer  string
	tokens  oauth2.TokenSource
}

func (c *credentials) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range c.headers {
		r.Header.Set(k, v)
	}
	switch {
	case c.tokens != nil:
		t, err := c.tokens.Token()
		if err != nil {
			return nil, fmt.Errorf("getting a token for the server: %w", err)
		}
		r.Header.Set("Authorization", "Bearer "+t.AccessToken)
	case c.bearer != "":
		r.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	return c.next.RoundTrip(r)
}

// errTooLarge is an upstream answer past Options.MaxResultBytes.
var errTooLarge = errors.New("the server's answer is larger than the gateway's bound")

// tap bounds what an upstream sends and, for a call whose context carries a relay, hands
// the notifications on the call's event stream to it as they arrive, before the SDK reads
// the answer behind them: relayed progress and log messages keep their order, and each
// reaches the client whose call they belong to.
type tap struct {
	next     http.RoundTripper
	maxBytes int64
}

func (t *tap) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	rel := relayFrom(r.Context())
	sse := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	resp.Body = &tappedBody{body: resp.Body, relay: rel, sse: sse, max: t.maxBytes}
	return resp, nil
}

// tappedBody counts what passes (per event on a stream, in all otherwise) and, on a
// stream, parses events for the relay.
type tappedBody struct {
	body  io.ReadCloser
	relay *relay
	sse   bool
	max   int64
	n     int64  // bytes of the current event, or of the body
	line  []byte // the partial line being read
	data  []byte // the current event's data
}

func (b *tappedBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if n > 0 {
		if over := b.scan(p[:n]); over {
			if b.relay != nil {
				b.relay.tooLarge.Store(true)
			}
			return 0, errTooLarge
		}
	}
	return n, err
}

// scan reads chunk's events; it reports whether the bound was passed.
func (b *tappedBody) scan(chunk []byte) bool {
	if !b.sse {
		b.n += int64(len(chunk))
		return b.max > 0 && b.n > b.max
	}
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			b.line = append(b.line, chunk...)
			b.n += int64(len(chunk))
			return b.max > 0 && b.n > b.max
		}
		b.line = append(b.line, chunk[:i]...)
		b.n += int64(i + 1)
		chunk = chunk[i+1:]
		if b.max > 0 && b.n > b.max {
			return true
		}
		line := strings.TrimSuffix(string(b.line), "\r")
		b.line = b.line[:0]
		switch {
		case line == "":
			if len(b.data) > 0 && b.relay != nil {
				b.relay.event(b.data)
			}
			b.data = b.data[:0]
			b.n = 0
		case strings.HasPrefix(line, "data:"):
			if len(b.data) > 0 {
				b.data = append(b.data, '\n')
			}
			b.data = append(b.data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
		}
	}
	return false
}

func (b *tappedBody) Close() error { return b.body.Close() }
