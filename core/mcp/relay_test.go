package mcp_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fngate/fngate/core/mcp"
	"github.com/fngate/fngate/core/mcpcall"
	"github.com/fngate/fngate/core/mcpsessions"
	"github.com/fngate/fngate/internal/mcptest"
)

// An upstream's progress and log messages reach the client on the call's stream, in order,
// before the result; an elicitation the upstream asks for is answered as unsupported.
func TestNotificationsRelayedAndElicitationRefused(t *testing.T) {
	up := mcptest.NewUpstream(t, "build", func(s *sdk.Server) {
		sdk.AddTool(s, &sdk.Tool{Name: "run"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			for i := 1; i <= 3; i++ {
				req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3, Message: "step"})
				req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "info", Logger: "build", Data: "compiled"})
				req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "debug", Data: "noise"})
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "built"}}}, nil, nil
		})
		sdk.AddTool(s, &sdk.Tool{Name: "ask"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			_, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "which branch?", RequestedSchema: map[string]any{"type": "object"}})
			if err == nil {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "elicited"}}}, nil, nil
			}
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "elicitation failed: " + err.Error()}}}, nil, nil
		})
	})
	for _, store := range []mcpsessions.Store{nil, mcpsessions.NewMemory()} {
		url, _ := gateway(t, mcp.Options{Servers: servers(map[string]string{"build": up.URL}), Sessions: store}, mcpcall.Caller{ID: "k"})
		var mu sync.Mutex
		var events []string
		s := mcptest.ConnectWith(t, url, nil, "2025-06-18", &sdk.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
				mu.Lock()
				events = append(events, "progress "+r.Params.ProgressToken.(string)+" "+r.Params.Message)
				mu.Unlock()
			},
			LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
				mu.Lock()
				events = append(events, "log "+string(r.Params.Level)+" "+r.Params.Data.(string))
				mu.Unlock()
			},
			// The client would answer; the gateway must not ask it.
			ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				t.Error("an elicitation crossed the gateway")
				return &sdk.ElicitResult{Action: "decline"}, nil
			},
		})
		if err := s.SetLoggingLevel(context.Background(), &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
		p := &sdk.CallToolParams{Name: "build__run", Arguments: map[string]any{}}
		p.SetProgressToken("client-token")
		res, err := s.CallTool(context.Background(), p)
		if err != nil || text(t, res) != "built" {
			t.Fatalf("%v %v", res, err)
		}
		// Notifications are handled asynchronously by the client SDK.
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			n := len(events)
			mu.Unlock()
			if n >= 6 || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		mu.Lock()
		got := strings.Join(events, "\n")
		mu.Unlock()
		// The client SDK runs its handlers concurrently: count each kind.
		if strings.Count(got, "progress client-token step") != 3 || strings.Count(got, "log info compiled") != 3 || strings.Contains(got, "noise") {
			t.Errorf("store %T: relayed\n%s\nwant 3 progress and 3 info logs, no debug", store, got)
		}

		res, err = call(s, "build__ask", map[string]any{})
		if err != nil || !res.IsError || !strings.Contains(text(t, res), "elicitation failed") {
			t.Errorf("elicitation: %v %v", res, err)
		}
	}
}
