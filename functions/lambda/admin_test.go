package main

import (
	"strings"
	"testing"

	"github.com/fngate/fngate/internal/fakeruntime"
)

// TestNoAdminAPIOnTheGatewayURL: the admin API lives in the control-plane function; on the
// gateway's URL /admin/v1/ is a path like any unknown one, whatever the caller sends.
func TestNoAdminAPIOnTheGatewayURL(t *testing.T) {
	in := start(t, "FNGATE_CONFIG_YAML="+testConfig)
	for _, path := range []string{"/admin/v1/keys", "/admin/v1/openapi.json", "/admin/v1/me"} {
		_, p, payload := in.invoke(t, fakeruntime.Request{Event: fakeruntime.URLEvent("GET", path, map[string]string{"authorization": "Bearer sk-anything"}, "")})
		if p.StatusCode != 404 || !strings.Contains(payload, `"code":"unknown_url"`) {
			t.Errorf("GET %s on the gateway: %d %s", path, p.StatusCode, payload)
		}
	}
}
