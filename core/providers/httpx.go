package providers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/upstreamhttp"
)

// NewHTTPClient returns the client shared by HTTP providers. Its transport is the gateway's
// own (core/upstreamhttp): HTTP/1.1 on kept connections, read in the caller's goroutine, with
// net/http's Transport behind it for a proxy from the environment. There is no client-wide
// timeout: each attempt's context carries the gateway's first-byte, idle and total limits,
// which a single http.Client.Timeout could not express for streams. Idle connections are
// kept long enough to survive the pauses of a function instance that lives for minutes. A
// connect timeout of 0 is the config's default (timeouts.connect).
func NewHTTPClient(connectTimeout time.Duration) *http.Client {
	if connectTimeout <= 0 {
		connectTimeout = config.DefaultConnect
	}
	return &http.Client{
		Transport: upstreamhttp.New(upstreamhttp.Options{ConnectTimeout: connectTimeout, IdleTimeout: 90 * time.Second, MaxIdlePerHost: 256}),
		// Redirects on a POST to an API are a misconfiguration, not something to follow.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// MaxAnswer bounds a non-streamed answer, which is read whole into memory: an upstream is
// untrusted input. The largest real answers (128k output tokens, JSON-escaped) are a few MB.
// Streams are bounded per event instead (MaxSSEEvent, the gRPC and event-stream decoders).
const MaxAnswer = 32 << 20

// MaxErrorBody bounds how much of an error response is read. The message is kept whole up to
// that: the gateway cuts it after redacting it (Error.Scrubbed).
const MaxErrorBody = 64 << 10

// StatusError classifies a non-2xx upstream response and reads what it says. It closes the
// body.
func StatusError(resp *http.Response, provider string) *Error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
	resp.Body.Close()
	code, msg, param := ParseErrorBody(body)
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	class := ClassifyStatus(resp.StatusCode)
	if class == Unavailable && code == "overloaded_error" {
		class = Overloaded
	}
	return &Error{
		Class:      class,
		Status:     resp.StatusCode,
		Code:       code,
		Message:    msg,
		Param:      param,
		RetryAfter: RetryAfter(resp.Header),
		Provider:   provider,
	}
}

// Drain reads what is left of a body the caller is done with, up to 64 KiB (a stream's last
// bytes, the rest of a small answer), and closes it, so the connection can carry the next
// request; a body with more left is cut, which costs only that connection.
func Drain(body io.ReadCloser) error {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	return body.Close()
}

// RetryAfter returns the upstream's retry hint in Retry-After form (seconds or a date).
func RetryAfter(h http.Header) string {
	if v := h.Get("Retry-After"); v != "" {
		return v
	}
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms >= 0 {
		return strconv.Itoa(int((ms + 999) / 1000))
	}
	return ""
}

// ParseErrorBody extracts code, message and param from the error shapes providers use:
// OpenAI {"error":{message,type,param,code}}, OpenRouter and vLLM with numeric codes,
// vLLM's older flat {"object":"error","message",...}, Anthropic {"type":"error","error":{type,
// message}} and Google {"error":{code,message,status}}.
func ParseErrorBody(body []byte) (code, message, param string) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return "", string(body), ""
	}
	var outer struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Param   *string         `json:"param"`
	}
	if json.Unmarshal(body, &outer) != nil {
		return "", string(body), ""
	}
	if len(outer.Error) > 0 && outer.Error[0] == '{' {
		var inner struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
			Status  string          `json:"status"`
			Param   *string         `json:"param"`
		}
		if json.Unmarshal(outer.Error, &inner) == nil {
			code = firstNonEmpty(rawCode(inner.Code), inner.Type)
			if inner.Status != "" {
				code = inner.Status // Google: RESOURCE_EXHAUSTED etc. names the failure best
			}
			if inner.Param != nil {
				param = *inner.Param
			}
			return code, inner.Message, param
		}
	}
	if len(outer.Error) > 0 && outer.Error[0] == '"' {
		var s string
		_ = json.Unmarshal(outer.Error, &s)
		return firstNonEmpty(rawCode(outer.Code), outer.Type), firstNonEmpty(outer.Message, s), ""
	}
	if outer.Param != nil {
		param = *outer.Param
	}
	return firstNonEmpty(rawCode(outer.Code), outer.Type), outer.Message, param
}

// rawCode renders a code that may be a string or a number.
func rawCode(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	}
	return string(raw)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
