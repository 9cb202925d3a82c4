package gcf

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestServesTheConsole: the control plane serves the console beside the admin API: sign in
// with an admin key (over TLS, the cookies being Secure) and see the keys page.
func TestServesTheConsole(t *testing.T) {
	h, err := build(context.Background(), env(map[string]string{"FNGATE_CONFIG_YAML": configYAML()}))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(h)
	defer srv.Close()
	c := *srv.Client()
	c.Jar, _ = cookiejar.New(nil)
	read := func(resp *http.Response, err error) (int, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, page := read(c.Get(srv.URL + "/console/signin"))
	tok := regexp.MustCompile(`action="/console/signin"[^>]*>\s*<input type="hidden" name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if code != http.StatusOK || tok == nil {
		t.Fatalf("sign-in page: %d\n%s", code, page)
	}
	code, page = read(c.PostForm(srv.URL+"/console/signin", url.Values{"csrf": {tok[1]}, "key": {adminToken}}))
	if code != http.StatusOK || !strings.Contains(page, "Gateway keys") || !strings.Contains(page, "Sign out") {
		t.Fatalf("after signing in: %d\n%s", code, page)
	}
}
