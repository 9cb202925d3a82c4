package main

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fngate/fngate/core/mcpsessions/dynamostore"
	"github.com/fngate/fngate/internal/awstest"
	"github.com/fngate/fngate/internal/emulator"
	"github.com/fngate/fngate/internal/mcptest"
)

// roundRobin sends each request to the next server, as a load balancer may.
type roundRobin struct {
	addrs []string
	n     atomic.Int64
}

func (r *roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Host = r.addrs[int(r.n.Add(1))%len(r.addrs)]
	req.Host = req.URL.Host
	req.Header.Set("Authorization", "Bearer key-xproc-mcp-1")
	return http.DefaultTransport.RoundTrip(req)
}

// A legacy client's MCP session, opened on one local server, is continued on another: the
// session lives in the shared store (DynamoDB on moto, the Firestore emulator).
func TestMCPSessionsAcrossProcesses(t *testing.T) {
	up := mcptest.NewUpstream(t, "gh", mcptest.Echo("echo", "gh:"))
	for _, b := range []struct {
		name  string
		store func(t *testing.T) string
	}{
		{"dynamodb", func(t *testing.T) string {
			endpoint := emulator.Moto(t)
			awstest.Isolate(t, "test", "AWS_REGION=us-east-1", "AWS_ENDPOINT_URL="+endpoint)
			db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
				Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
			table := fmt.Sprint("fngate-xproc-mcp-", time.Now().UnixNano())
			if err := dynamostore.CreateTable(context.Background(), db, table); err != nil {
				t.Fatal(err)
			}
			return "store: dynamodb, table: " + table
		}},
		{"firestore", func(t *testing.T) string {
			t.Setenv("FIRESTORE_EMULATOR_HOST", emulator.Firestore(t))
			return fmt.Sprintf("store: firestore, project: fngate-test, collection: xproc_mcp_%d", time.Now().UnixNano())
		}},
	} {
		t.Run(b.name, func(t *testing.T) {
			cfg := fmt.Sprintf(`
mcp_sessions: {%s, timeout: 15s}
mcp_servers: {gh: {url: %q}}
keys: [{name: app, value: key-xproc-mcp-1}]
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
`, b.store(t), up.URL)
			var addrs []string
			for range 2 {
				_, addr := startServer(t, cfg, "-route-state", "off")
				addrs = append(addrs, addr)
			}
			rr := &roundRobin{addrs: addrs}
			c := sdk.NewClient(&sdk.Implementation{Name: "legacy", Version: "1"}, nil)
			s, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: "http://" + addrs[0] + "/mcp", HTTPClient: &http.Client{Transport: rr}, MaxRetries: -1},
				&sdk.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.ID() == "" {
				t.Fatal("no session opened")
			}
			for i := range 4 {
				res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "gh__echo", Arguments: map[string]any{"text": fmt.Sprint(i)}})
				if err != nil || res.Content[0].(*sdk.TextContent).Text != fmt.Sprint("gh:", i) {
					t.Fatalf("call %d through server %d: %v %v", i, rr.n.Load()%2, res, err)
				}
			}
		})
	}
}
