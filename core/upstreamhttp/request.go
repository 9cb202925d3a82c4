package upstreamhttp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// writeHead writes req's request line and header, framing its body by Content-Length or,
// when its length is not known, chunks; it returns the body still to be written (nil: none).
func writeHead(w *bufio.Writer, req *http.Request) (body io.ReadCloser, chunked bool, err error) {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	w.WriteString(method)
	w.WriteByte(' ')
	w.WriteString(req.URL.RequestURI())
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(host)
	w.WriteString("\r\n")
	for name, values := range req.Header {
		switch http.CanonicalHeaderKey(name) {
		case "Host", "Content-Length", "Transfer-Encoding", "Connection":
			continue // this writer's own
		}
		for _, v := range values {
			w.WriteString(name)
			w.WriteString(": ")
			w.WriteString(v)
			w.WriteString("\r\n")
		}
	}
	if _, ok := req.Header["User-Agent"]; !ok {
		w.WriteString("User-Agent: fngate\r\n")
	}
	if req.Close {
		w.WriteString("Connection: close\r\n")
	}
	body = req.Body
	if body == http.NoBody {
		body = nil
	}
	switch {
	case body != nil && req.ContentLength <= 0:
		chunked = true
		_, err = w.WriteString("Transfer-Encoding: chunked\r\n\r\n")
	case body != nil:
		w.WriteString("Content-Length: ")
		w.WriteString(strconv.FormatInt(req.ContentLength, 10))
		_, err = w.WriteString("\r\n\r\n")
	case method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch:
		_, err = w.WriteString("Content-Length: 0\r\n\r\n")
	default:
		_, err = w.WriteString("\r\n")
	}
	return body, chunked, err
}

// checkRequest refuses a request that cannot be written as it is: a method or header name
// that is not a token, a value or host with a line break (which would let a value that came
// from a client start a header or a request of its own). It runs before a connection is
// taken, so that nothing of such a request is sent.
func checkRequest(req *http.Request) error {
	if req.Method != "" && !validName(req.Method) {
		return fmt.Errorf("upstreamhttp: invalid method %q", req.Method)
	}
	if !validValue(req.Host) || !validValue(req.URL.Host) {
		return errBadHeader
	}
	for name, values := range req.Header {
		if !validName(name) {
			return errBadHeader
		}
		for _, v := range values {
			if !validValue(v) {
				return errBadHeader
			}
		}
	}
	return nil
}

// writeChunked writes body as a chunked body.
func writeChunked(w *bufio.Writer, body io.Reader) error {
	if _, err := io.Copy(&chunkWriter{w: w}, body); err != nil {
		return err
	}
	_, err := w.WriteString("0\r\n\r\n")
	return err
}

// copyBody writes exactly n bytes of body to w.
func copyBody(w io.Writer, body io.Reader, n int64) error {
	got, err := io.Copy(w, io.LimitReader(body, n))
	if err == nil && got != n {
		err = errors.New("upstreamhttp: the request's body was shorter than its Content-Length")
	}
	return err
}

// chunkWriter writes what it is given as one chunk of a chunked body each time.
type chunkWriter struct{ w *bufio.Writer }

func (c *chunkWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.w.WriteString(strconv.FormatInt(int64(len(p)), 16))
	c.w.WriteString("\r\n")
	c.w.Write(p)
	_, err := c.w.WriteString("\r\n")
	return len(p), err
}

// validName reports whether s is an HTTP token (a header name, a method).
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// validValue reports whether s can be a header value: no line breaks, which would let a
// value that came from a client start a header or a request of its own.
func validValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\r' || c == '\n' || c == 0 {
			return false
		}
	}
	return true
}
