// Package modelarmor is the model-armor guardrail: a Google Cloud Model Armor template,
// called through its REST API (the Go client module is not served by the module proxy the
// gateway builds with) with the Google credentials the Vertex provider uses.
//
//	armor.go     Checker, New, Check: one call per text, at most four at a time, verdicts combined
//	call.go      one sanitize call: the request, the bearer token, the bounded answer
//	wire.go      the answer's JSON (SanitizationResult), as Google's REST reference gives it
//	judge.go     one SanitizationResult to pass, mask or block, and its categories
//	template.go  the once-per-process check that the template de-identifies through the
//	             configured Sensitive Data Protection template
//	errors.go    HTTP statuses, Google's error body and transport failures to guardrail.Error
//	pricing.go   characters checked and what they cost
//
// The REST reference the calls follow (checked against google/cloud/modelarmor/v1/service.proto):
//
//	https://cloud.google.com/security-command-center/docs/reference/model-armor/rest/v1/projects.locations.templates/sanitizeUserPrompt
//	https://cloud.google.com/security-command-center/docs/reference/model-armor/rest/v1/projects.locations.templates/sanitizeModelResponse
//	https://cloud.google.com/security-command-center/docs/reference/model-armor/rest/v1/projects.locations.templates/get
//	https://cloud.google.com/security-command-center/docs/reference/model-armor/rest/v1/SanitizationResult
package modelarmor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/auth"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/guardrail"
)

// Options are what a Checker is built with besides its configuration.
type Options struct {
	// HTTPClient makes the calls. If nil, a client with bounded dial, TLS and header times
	// is used (each call is also bounded by the Check's context).
	HTTPClient *http.Client
	// Credentials authorize the calls. If nil, Application Default Credentials with the
	// cloud-platform scope are found on first use; a failed lookup is tried again next time.
	Credentials *auth.Credentials
}

// parallel is how many texts of one Check are sent at once: Model Armor takes one text per
// call, and a long conversation should not open dozens of connections per request.
const parallel = 4

// Checker is one Model Armor template. Safe for concurrent use.
type Checker struct {
	template   string // projects/P/locations/L/templates/T
	deidentify string // the de-identify template the template must use, "" when none is required
	base       string // the endpoint, without a trailing slash
	client     *http.Client

	creds   atomic.Pointer[auth.Credentials]
	credsMu sync.Mutex

	verified templateCheck
}

var _ guardrail.Checker = (*Checker)(nil)

// New returns the Checker of a model-armor guardrail. It contacts nothing: credentials are
// found and the template checked at the first Check.
func New(g *config.Guardrail, o Options) (*Checker, error) {
	if g == nil || g.Kind != config.GuardrailModelArmor {
		return nil, errors.New("modelarmor: not a model-armor guardrail")
	}
	location := config.ArmorLocation(g.Template)
	if location == "" {
		return nil, fmt.Errorf("modelarmor: %q is not a template's full name (projects/P/locations/L/templates/T)", g.Template)
	}
	base := "https://modelarmor." + location + ".rep.googleapis.com"
	if g.BaseURL != "" {
		u, err := url.Parse(g.BaseURL)
		if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
			return nil, fmt.Errorf("modelarmor: base_url %q is not an http(s) URL", g.BaseURL)
		}
		base = strings.TrimRight(g.BaseURL, "/")
	}
	c := &Checker{template: g.Template, deidentify: g.DeidentifyTemplate, base: base, client: o.HTTPClient}
	if c.client == nil {
		c.client = defaultClient()
	}
	if o.Credentials != nil {
		c.creds.Store(o.Credentials)
	}
	c.verified.init()
	return c, nil
}

// defaultClient bounds what the Check's context does not: connecting and the TLS handshake
// to a regional endpoint that does not answer, and a connection pool kept warm for the next
// request (a guardrail call is on every request's path).
func defaultClient() *http.Client {
	t := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: config.MaxGuardrailTimeout,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{Transport: t, Timeout: config.MaxGuardrailTimeout}
}

// Check sends each non-empty text to the template (sanitizeUserPrompt for input,
// sanitizeModelResponse for output), at most four at a time, and combines the answers: any
// block wins, else any mask (Masked has every text, masked or as it was), else pass. A block
// ends the calls still in flight: their verdicts cannot change it.
func (c *Checker) Check(ctx context.Context, src guardrail.Source, texts []string) (guardrail.Verdict, error) {
	if err := c.verified.check(ctx, c); err != nil {
		return guardrail.Verdict{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]result, len(texts))
	slots := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, text := range texts {
		if text == "" {
			continue
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			results[i].err = failure(ctx, ctx.Err())
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			results[i] = c.sanitize(ctx, src, text)
			if results[i].err == nil && results[i].judgement.action == guardrail.Block {
				cancel()
			}
		}()
	}
	wg.Wait()
	return combine(texts, results)
}

// result is one text's call: its judgement, or why there is none.
type result struct {
	judgement judgement
	answered  bool // the service answered: it metered the text
	err       error
}

// combine is the Check's verdict over the texts' results. A block is final even when other
// calls failed (they cannot unblock it); otherwise the first failure, in text order, is the
// Check's.
func combine(texts []string, results []result) (guardrail.Verdict, error) {
	var v guardrail.Verdict
	var firstErr error
	masks := false
	for i, r := range results {
		if r.answered {
			v.Units += characters(texts[i])
		}
		if r.err != nil {
			if firstErr == nil {
				firstErr = r.err
			}
			continue
		}
		v.Categories = appendNew(v.Categories, r.judgement.categories...)
		switch r.judgement.action {
		case guardrail.Block:
			v.Action = guardrail.Block
		case guardrail.Mask:
			masks = true
		}
	}
	v.CostUSD = cost(v.Units)
	switch {
	case v.Action == guardrail.Block:
		return v, nil
	case firstErr != nil:
		return guardrail.Verdict{}, firstErr
	case masks:
		v.Action = guardrail.Mask
		v.Masked = make([]string, len(texts))
		for i, r := range results {
			v.Masked[i] = texts[i]
			if r.judgement.action == guardrail.Mask {
				v.Masked[i] = r.judgement.masked
			}
		}
	}
	return v, nil
}

// appendNew appends the names not already in list, keeping the order they were first seen.
func appendNew(list []string, names ...string) []string {
	for _, n := range names {
		if !slices.Contains(list, n) {
			list = append(list, n)
		}
	}
	return list
}
