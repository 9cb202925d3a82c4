package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/fngate/fngate/core/admin"
)

// maxAnswer bounds what the console reads of one admin answer: a page of 200 keys or a
// year of daily usage per model is well under it.
const maxAnswer = 8 << 20

// apiError is an admin API refusal, in its one error shape; the console shows its message
// and answers its status.
type apiError struct {
	Status  int
	Message string
	Code    string
}

func (e *apiError) Error() string { return fmt.Sprintf("admin API: %d: %s", e.Status, e.Message) }

// call performs one admin API operation as p, in process: the admin handler checks p's role
// and writes the audit, exactly as for a bearer token, so roles and audit live in one place.
// A 2xx answer is decoded into out (when not nil); any other is an *apiError.
func (c *Console) call(ctx context.Context, p *admin.Principal, method, path string, query url.Values, body, out any) error {
	req, err := c.adminRequest(ctx, method, path, query, body)
	if err != nil {
		return err
	}
	return c.do(admin.WithPrincipal(ctx, p), req, out)
}

// callBearer performs one admin API operation with a bearer token (an admin key or an ID
// token being signed in with): the admin handler authenticates it, as for any client.
func (c *Console) callBearer(ctx context.Context, token, method, path string, out any) error {
	req, err := c.adminRequest(ctx, method, path, nil, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return c.do(ctx, req, out)
}

func (c *Console) adminRequest(ctx context.Context, method, path string, query url.Values, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	// path's segments are escaped by the caller (a route id holds slashes); RawPath keeps
	// them escaped on the way to the admin handler's patterns.
	u := &url.URL{Path: mustUnescape(path), RawPath: path, RawQuery: query.Encode()}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	if req.Body == nil {
		// As a server's request has: the admin handler reads every body.
		req.Body = http.NoBody
	}
	req.RemoteAddr = "console"
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

func (c *Console) do(ctx context.Context, req *http.Request, out any) error {
	rec := newRecorder()
	c.admin.ServeHTTP(rec, req.WithContext(ctx))
	if rec.status < 200 || rec.status > 299 {
		var e struct {
			Error struct {
				Message string `json:"message"`
				Code    string `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(rec.body.Bytes(), &e)
		if e.Error.Message == "" {
			e.Error.Message = http.StatusText(rec.status)
		}
		return &apiError{Status: rec.status, Message: e.Error.Message, Code: e.Error.Code}
	}
	if rec.over {
		return &apiError{Status: http.StatusBadGateway, Message: "the admin API's answer is too large to show"}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(rec.body.Bytes(), out); err != nil {
		return fmt.Errorf("console: admin answer to %s %s: %w", req.Method, req.URL.Path, err)
	}
	return nil
}

func mustUnescape(p string) string {
	u, err := url.PathUnescape(p)
	if err != nil {
		return p
	}
	return u
}

// recorder is the admin handler's ResponseWriter in process: it keeps the status and at
// most maxAnswer bytes of the body.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	over   bool
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	if r.body.Len()+len(b) > maxAnswer {
		r.over = true
		return len(b), nil
	}
	return r.body.Write(b)
}
