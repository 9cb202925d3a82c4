package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// client calls the admin API: over the network with -url, or in this process in direct mode
// (a transport that serves each request with the admin handler itself), so both modes send
// the same requests and read the same answers.
type client struct {
	base  string // scheme://host[/path], without a trailing slash
	token string // bearer token; "" in direct mode, where the principal is in the context
	http  *http.Client
}

// Bounds on an answer: the API's largest is a page of 200 keys or audit entries.
const (
	maxAnswer   = 32 << 20
	callTimeout = 30 * time.Second
)

// remoteClient is the client of the API at rawURL, with the token from FNGATE_ADMIN_TOKEN.
func remoteClient(rawURL, token string, hc *http.Client) (*client, error) {
	u, err := url.Parse(strings.TrimRight(rawURL, "/"))
	if err != nil || u.Host == "" || u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("-url %q: want the control plane's https://host[/path]", rawURL)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		// The token would cross the network in the clear.
		return nil, fmt.Errorf("-url %q: plain http is only for loopback (127.0.0.1, ::1, localhost): use https", rawURL)
	}
	if token == "" {
		return nil, errors.New("FNGATE_ADMIN_TOKEN is not set: export the admin token (an admin key, or an OIDC ID token) before calling " + u.Redacted())
	}
	u.Path = strings.TrimSuffix(u.Path, "/admin/v1")
	if hc == nil {
		hc = &http.Client{Timeout: callTimeout}
	}
	return &client{base: u.String(), token: token, http: hc}, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// apiError is an answer in the admin API's error shape (OpenAI's).
type apiError struct {
	Status  int    `json:"-"`
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   string `json:"param"`
	Code    string `json:"code"`
}

func (e *apiError) Error() string {
	var b strings.Builder
	b.WriteString(e.Message)
	b.WriteString(" (")
	b.WriteString(strconv.Itoa(e.Status))
	for _, s := range []string{e.Type, e.Code} {
		if s != "" {
			b.WriteString(" " + s)
		}
	}
	if e.Param != "" {
		b.WriteString(", param " + e.Param)
	}
	b.WriteString(")")
	return b.String()
}

// call sends one request to the API (path under /admin/v1/, query and body optional) and
// returns the answer's JSON; an answer in the error shape is an *apiError.
func (c *client) call(ctx context.Context, method, path string, query url.Values, body any) ([]byte, error) {
	target := c.base + "/admin/v1/" + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, "/admin/v1/"+path, unwrapURL(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("%s /admin/v1/%s: reading the answer: %w", method, path, err)
	}
	if len(data) > maxAnswer {
		return nil, fmt.Errorf("%s /admin/v1/%s: the answer is over %d MiB", method, path, maxAnswer>>20)
	}
	if resp.StatusCode/100 != 2 {
		var shape struct {
			Error *apiError `json:"error"`
		}
		if json.Unmarshal(data, &shape) == nil && shape.Error != nil && shape.Error.Message != "" {
			shape.Error.Status = resp.StatusCode
			return nil, shape.Error
		}
		return nil, &apiError{Status: resp.StatusCode, Message: "the server answered " + resp.Status + " without the admin API's error (is -url the control plane's?)"}
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("%s /admin/v1/%s: the answer is not JSON (is -url the control plane's?)", method, path)
	}
	return data, nil
}

// unwrapURL drops *url.Error's repetition of the method and URL, which call says already.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// handlerTransport serves requests with an http.Handler in this process: direct mode's
// transport. with adds what the handler needs to the request's context (the principal).
type handlerTransport struct {
	h    http.Handler
	with func(context.Context) context.Context
}

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	// The request as a server would hand it over: a body always (http.NoBody when none),
	// the request URI, a peer address.
	in := r.Clone(t.with(r.Context()))
	if in.Body == nil {
		in.Body = http.NoBody
	}
	in.RequestURI, in.RemoteAddr = in.URL.RequestURI(), "127.0.0.1:0"
	w := &recorder{header: http.Header{}, status: http.StatusOK}
	t.h.ServeHTTP(w, in)
	return &http.Response{
		Status: strconv.Itoa(w.status) + " " + http.StatusText(w.status), StatusCode: w.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(&w.body), ContentLength: int64(w.body.Len()), Request: r,
	}, nil
}

// recorder is the ResponseWriter of an in-process call.
type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if !w.wrote {
		w.status, w.wrote = status, true
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.body.Len()+len(b) > maxAnswer+1 {
		return 0, errors.New("the answer is too large")
	}
	return w.body.Write(b)
}
