package mcp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/mcp"
	"github.com/fngate/fngate/core/mcpcall"
	"github.com/fngate/fngate/internal/mcptest"
)

// TestListsArePrivateToTheCaller: under the sessionless protocol every list names its
// cacheScope, private since the caller's access shapes it. Claude Code 2.1.332 speaks that
// protocol and drops a list whose cacheScope is empty, and with it the gateway's tools. The
// request is the one Claude Code sends, on the wire, as an SDK client would fill the field in.
func TestListsArePrivateToTheCaller(t *testing.T) {
	up := mcptest.NewUpstream(t, "gh", mcptest.Echo("echo", ""))
	url, _ := gateway(t, mcp.Options{Servers: servers(map[string]string{"gh": up.URL})}, mcpcall.Caller{ID: "k", Key: "k"})
	for _, method := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
		t.Run(method, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
				`"io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2.1.332"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", method)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			var msg struct {
				Result map[string]json.RawMessage `json:"result"`
			}
			for _, line := range strings.Split(string(b), "\n") {
				if data, ok := strings.CutPrefix(line, "data: "); ok {
					_ = json.Unmarshal([]byte(data), &msg)
				}
			}
			if resp.StatusCode != 200 || string(msg.Result["cacheScope"]) != `"private"` {
				t.Errorf("%d, cacheScope %s\n%s", resp.StatusCode, msg.Result["cacheScope"], b)
			}
		})
	}
}
