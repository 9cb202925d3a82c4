package main

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// TestServesTheConsole: the console is served beside the admin API through the function
// URL adapter, its cookies going out in the event's cookies and back in on the next: sign
// in with an admin key and see the keys page.
func TestServesTheConsole(t *testing.T) {
	h, err := setup(context.Background(), env(map[string]string{"FNGATE_CONFIG_YAML": configYAML()}))
	if err != nil {
		t.Fatal(err)
	}
	jar := map[string]string{}
	send := func(method, path, form string) *events.LambdaFunctionURLResponse {
		t.Helper()
		ev := &events.LambdaFunctionURLRequest{RawPath: path, Body: form, Headers: map[string]string{}}
		if form != "" {
			ev.Headers["content-type"] = "application/x-www-form-urlencoded"
		}
		for k, v := range jar {
			ev.Cookies = append(ev.Cookies, k+"="+v)
		}
		ev.RequestContext.DomainName = "abc.lambda-url.us-east-1.on.aws"
		ev.RequestContext.HTTP.Method = method
		resp, err := buffered(h)(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range resp.Cookies {
			kv, attrs, _ := strings.Cut(c, ";")
			k, v, _ := strings.Cut(kv, "=")
			if !strings.Contains(attrs, "HttpOnly") || !strings.Contains(attrs, "Secure") {
				t.Errorf("cookie %s lacks HttpOnly or Secure", k)
			}
			if v == "" || strings.Contains(attrs, "Max-Age=0") {
				delete(jar, k)
			} else {
				jar[k] = v
			}
		}
		return resp
	}
	page := send(http.MethodGet, "/console/signin", "")
	tok := regexp.MustCompile(`action="/console/signin"[^>]*>\s*<input type="hidden" name="csrf" value="([^"]+)"`).FindStringSubmatch(page.Body)
	if page.StatusCode != http.StatusOK || tok == nil {
		t.Fatalf("sign-in page: %d\n%s", page.StatusCode, page.Body)
	}
	in := send(http.MethodPost, "/console/signin", url.Values{"csrf": {tok[1]}, "key": {adminToken}}.Encode())
	if in.StatusCode != http.StatusSeeOther || in.Headers["Location"] != "/console/keys" {
		t.Fatalf("sign-in: %d %v\n%s", in.StatusCode, in.Headers, in.Body)
	}
	keys := send(http.MethodGet, "/console/keys", "")
	if keys.StatusCode != http.StatusOK || !strings.Contains(keys.Body, "Gateway keys") || !strings.Contains(keys.Body, "Sign out") {
		t.Fatalf("keys page: %d\n%s", keys.StatusCode, keys.Body)
	}
	if css := send(http.MethodGet, "/console/static/console.css", ""); css.StatusCode != http.StatusOK || !strings.HasPrefix(css.Headers["Content-Type"], "text/css") {
		t.Errorf("stylesheet: %d %v", css.StatusCode, css.Headers)
	}
}
