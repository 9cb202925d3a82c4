package modelarmor

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"

	"cloud.google.com/go/auth"
	"cloud.google.com/go/auth/credentials"

	"github.com/fngate/fngate/core/guardrail"
)

// scope is what every Model Armor call needs (the service's only OAuth scope).
const scope = "https://www.googleapis.com/auth/cloud-platform"

// maxAnswer bounds what is read of any answer: a SanitizationResult for one text is a few
// kilobytes, its de-identified copy at most the text again.
const maxAnswer = 4 << 20

// The request bodies (SanitizeUserPromptRequest, SanitizeModelResponseRequest): the
// template is in the path, so only the data item is sent.
type (
	dataItem struct {
		Text string `json:"text"`
	}
	promptRequest struct {
		UserPromptData dataItem `json:"userPromptData"`
	}
	responseRequest struct {
		ModelResponseData dataItem `json:"modelResponseData"`
	}
)

// sanitize sends one text and judges the answer.
func (c *Checker) sanitize(ctx context.Context, src guardrail.Source, text string) result {
	method, body := ":sanitizeUserPrompt", any(promptRequest{UserPromptData: dataItem{Text: text}})
	if src == guardrail.Output {
		method, body = ":sanitizeModelResponse", responseRequest{ModelResponseData: dataItem{Text: text}}
	}
	payload, err := json.Marshal(body)
	if err != nil { // a Go string always marshals; kept so a future field cannot panic
		return result{err: &guardrail.Error{Kind: guardrail.ErrInvalid, Message: "cannot encode the request: " + err.Error(), Err: err}}
	}
	answer, err := c.call(ctx, http.MethodPost, c.resource()+method, payload)
	if err != nil {
		return result{err: err}
	}
	var resp sanitizeResponse
	if err := json.Unmarshal(answer, &resp); err != nil {
		return result{answered: true, err: malformed("the sanitize answer is not a SanitizeUserPromptResponse: "+err.Error(), err)}
	}
	j, err := judge(resp.SanitizationResult)
	return result{judgement: j, answered: true, err: err}
}

// resource is the template's path below the endpoint, each segment escaped: the name's
// segments are the operator's and may hold characters a path must not carry raw.
func (c *Checker) resource() string {
	parts := strings.Split(c.template, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return "/v1/" + strings.Join(parts, "/")
}

// call sends one request with the bearer token and returns the body of a 200, read through a
// bound; anything else is a *guardrail.Error.
func (c *Checker) call(ctx context.Context, method, path string, payload []byte) ([]byte, error) {
	bearer, err := c.bearer(ctx)
	if err != nil {
		return nil, err
	}
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, &guardrail.Error{Kind: guardrail.ErrInvalid, Message: "cannot build the request: " + err.Error(), Err: err}
	}
	req.Header.Set("Authorization", bearer)
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, failure(ctx, err)
	}
	defer resp.Body.Close()
	// One byte more than the bound tells an answer at the bound from one above it.
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, failure(ctx, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, statusError(resp.StatusCode, answer)
	}
	if len(answer) > maxAnswer {
		return nil, malformed("the answer is larger than 4 MiB", nil)
	}
	return answer, nil
}

// bearer returns the Authorization value, finding the credentials on first use.
func (c *Checker) bearer(ctx context.Context) (string, error) {
	creds, err := c.credentials()
	if err != nil {
		return "", err
	}
	tok, err := creds.Token(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return "", failure(ctx, err)
		}
		return "", &guardrail.Error{Kind: guardrail.ErrAuth, Message: "cannot get an access token: " + bounded(err.Error()), Err: err}
	}
	typ := tok.Type
	if typ == "" {
		typ = "Bearer"
	}
	return typ + " " + tok.Value, nil
}

// credentials returns the Checker's credentials, Application Default Credentials found on
// first use when none were given. A failed lookup is not remembered: a metadata server slow
// at start-up should not leave the guardrail failing for good.
func (c *Checker) credentials() (*auth.Credentials, error) {
	if creds := c.creds.Load(); creds != nil {
		return creds, nil
	}
	c.credsMu.Lock()
	defer c.credsMu.Unlock()
	if creds := c.creds.Load(); creds != nil {
		return creds, nil
	}
	creds, err := credentials.DetectDefault(&credentials.DetectOptions{Scopes: []string{scope}})
	if err != nil {
		return nil, &guardrail.Error{Kind: guardrail.ErrAuth, Message: "no usable Application Default Credentials: " + bounded(err.Error()), Err: err}
	}
	c.creds.Store(creds)
	return creds, nil
}
