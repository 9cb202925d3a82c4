package otel

import (
	"net/http"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Transport wraps the HTTP providers' shared transport: each call made under an attempt's
// context carries that attempt's W3C traceparent (and tracestate) upstream, and the attempt
// learns the host it called (server.address and server.port).
//
// Why a transport and not otelhttp's, or the providers: the attempt's CLIENT span already is
// the upstream call, so an instrumented transport's own span per exchange would only nest a
// twin under it; and one wrapper here covers every HTTP provider, the SDK-built ones too
// (Anthropic's, Bedrock's), with nothing for each provider to remember. Bedrock signs its
// requests before they reach the transport; traceparent is not among the signed headers, so
// adding it leaves the signature valid. Vertex AI's Gemini calls are gRPC and carry no trace
// context (Google does not join a caller's trace there anyway).
func (t *Telemetry) Transport(next http.RoundTripper) http.RoundTripper {
	return &transport{next: next, prop: t.prop}
}

type transport struct {
	next http.RoundTripper
	prop propagation.TextMapPropagator
}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if a, ok := ctx.Value(attemptKey{}).(*attempt); ok {
		a.called(req.URL)
	}
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return tr.next.RoundTrip(req)
	}
	// A RoundTripper must not change the request it was given: the headers go on a copy.
	out := req.WithContext(ctx)
	out.Header = req.Header.Clone()
	tr.prop.Inject(ctx, propagation.HeaderCarrier(out.Header))
	return tr.next.RoundTrip(out)
}

// called records the first host the attempt's calls went to.
func (a *attempt) called(u *url.URL) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.host != "" {
		return
	}
	a.host = u.Hostname()
	a.port, _ = strconv.Atoi(u.Port())
	if a.port == 0 {
		a.port = 443
		if u.Scheme == "http" {
			a.port = 80
		}
	}
}
