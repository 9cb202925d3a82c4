package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// maxResponse bounds an answer to what a BUFFERED function URL returns (6 MB, base64 and
// all); the admin API's pages are far smaller.
const maxResponse = 4 << 20

// buffered adapts an http.Handler to a BUFFERED function URL: the request's event becomes
// an *http.Request (its cookies, which the event carries apart from the headers, back in a
// Cookie header), and the whole answer is returned at once, Set-Cookie in the event's own
// cookies list.
func buffered(h http.Handler) func(context.Context, *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLResponse, error) {
	return func(ctx context.Context, ev *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLResponse, error) {
		var body io.Reader = strings.NewReader(ev.Body)
		if ev.IsBase64Encoded {
			body = base64.NewDecoder(base64.StdEncoding, body)
		}
		u := "https://" + ev.RequestContext.DomainName + ev.RawPath
		if ev.RawQueryString != "" {
			u += "?" + ev.RawQueryString
		}
		r, err := http.NewRequestWithContext(ctx, ev.RequestContext.HTTP.Method, u, body)
		if err != nil {
			return &events.LambdaFunctionURLResponse{StatusCode: http.StatusBadRequest, Body: `{"error":{"message":"malformed request","type":"invalid_request_error","param":null,"code":null}}`}, nil
		}
		r.RemoteAddr = ev.RequestContext.HTTP.SourceIP
		r.RequestURI = ev.RawPath
		for k, v := range ev.Headers {
			r.Header.Add(k, v)
		}
		if len(ev.Cookies) > 0 {
			r.Header.Set("Cookie", strings.Join(ev.Cookies, "; "))
		}
		w := &responseWriter{header: http.Header{}}
		serve(h, w, r)
		return w.response(), nil
	}
}

// serve runs h, answering a panic with a 500 so the environment lives on.
func serve(h http.Handler, w *responseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			slog.Error("control plane panic", slog.Any("panic", v), slog.String("path", r.URL.Path))
			w.header = http.Header{"Content-Type": {"application/json"}}
			w.body.Reset()
			w.status = http.StatusInternalServerError
			w.body.WriteString(`{"error":{"message":"internal error","type":"server_error","param":null,"code":null}}`)
		}
	}()
	h.ServeHTTP(w, r)
}

type responseWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
	over   bool
}

func (w *responseWriter) Header() http.Header { return w.header }

func (w *responseWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *responseWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.body.Len()+len(p) > maxResponse {
		w.over = true
		return 0, io.ErrShortWrite
	}
	return w.body.Write(p)
}

func (w *responseWriter) response() *events.LambdaFunctionURLResponse {
	if w.over {
		return &events.LambdaFunctionURLResponse{StatusCode: http.StatusInternalServerError, Headers: map[string]string{"Content-Type": "application/json"},
			Body: `{"error":{"message":"the answer is too large for the function URL","type":"server_error","param":null,"code":null}}`}
	}
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	out := &events.LambdaFunctionURLResponse{StatusCode: status, Headers: map[string]string{}}
	for k, v := range w.header {
		if k == "Set-Cookie" {
			out.Cookies = v
			continue
		}
		out.Headers[k] = strings.Join(v, ",")
	}
	if utf8.Valid(w.body.Bytes()) {
		out.Body = w.body.String()
	} else {
		out.Body, out.IsBase64Encoded = base64.StdEncoding.EncodeToString(w.body.Bytes()), true
	}
	return out
}
