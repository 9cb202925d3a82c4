package mcp

import (
	"context"
	"encoding/json"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// relay carries an upstream's notifications about one forwarded call to the client that
// made it, on that call's stream: progress under the client's own progress token, and log
// messages at the client's level (the SDK's session drops those below it).
type relay struct {
	ctx     context.Context // the client's call
	session *sdk.ServerSession
	token   any // the client's progress token; nil when it asked for no progress
	// tooLarge is set when the upstream's answer passed the bound.
	tooLarge atomic.Bool
}

type relayKey struct{}

func withRelay(ctx context.Context, r *relay) context.Context {
	return context.WithValue(ctx, relayKey{}, r)
}

// upstreamContext is the context of a call to an upstream on behalf of ctx's caller: ended
// when ctx is, but carrying none of its values. The SDK keeps the client's protocol version
// in the context it serves a message with, and its client would send that version upstream.
func upstreamContext(ctx context.Context) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, cancel)
	return out, func() { stop(); cancel() }
}

func relayFrom(ctx context.Context) *relay {
	r, _ := ctx.Value(relayKey{}).(*relay)
	return r
}

// event hands one event of the upstream's stream on, when it is a notification the client
// may be sent. Responses and requests (an elicitation the SDK refuses) are not relayed.
func (r *relay) event(data []byte) {
	var msg struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(data, &msg) != nil || msg.ID != nil {
		return
	}
	switch msg.Method {
	case "notifications/progress":
		if r.token == nil {
			return
		}
		var p sdk.ProgressNotificationParams
		if json.Unmarshal(msg.Params, &p) != nil {
			return
		}
		p.ProgressToken = r.token
		_ = r.session.NotifyProgress(r.ctx, &p)
	case "notifications/message":
		var p sdk.LoggingMessageParams
		if json.Unmarshal(msg.Params, &p) != nil || p.Level == "" {
			return
		}
		_ = r.session.Log(r.ctx, &p)
	}
}
