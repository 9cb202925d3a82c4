package gcf

import (
	"context"
	"net/http"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/counters/firestorecounters"
	"github.com/fngate/fngate/core/gateway"
)

// historyStore gives the gateway the keys' usage history (docs/usage-history.md): documents
// of their own in the counters' Firestore database, through the counters' store when the
// keys have limits, else through a store of its own on the same database, since unlimited
// keys' usage is kept too. Without that database (counters in memory, no COUNTERS_PROJECT)
// there is none: a history in one instance's memory would be lost with it.
func historyStore(ctx context.Context, getenv func(string) string, cfg *config.Config, opt *gateway.Options) error {
	if h, ok := opt.Counters.(counters.History); ok {
		opt.History = h
		return nil
	}
	c := cfg.Counters
	project := getenv(EnvCountersProject)
	if !(c.Kind == "" && project != "" || c.Kind == config.StoreFirestore) {
		return nil
	}
	for field, env := range map[*string]string{&c.Project: project, &c.Database: getenv(EnvCountersDatabase), &c.Prefix: getenv(EnvCountersPrefix)} {
		if *field == "" {
			*field = env
		}
	}
	s, _, err := firestorecounters.Open(ctx, c) // the client lives as long as the instance
	if err != nil {
		return err
	}
	opt.History = s
	return nil
}

// usageFlush bounds how long a request's end waits for its usage to be written.
const usageFlush = 2 * time.Second

// flushingUsage serves gw, and once a request is answered (its last byte flushed to the
// client) waits for the usage history and the response cache's writes (queued: it may queue
// either) before the handler returns. Under request-based
// billing Cloud Run throttles the CPU of an instance between requests, and may shut an idle
// one down: a write left to the background could wait for the next request, or never
// happen. The client has its answer by then; only the request's end in Cloud Run's eyes
// waits, a few milliseconds of one Firestore write.
func flushingUsage(gw *gateway.Gateway, queued bool) http.Handler {
	if !queued {
		return gw
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gw.ServeHTTP(w, r)
		if r.Header.Get("Upgrade") == "" { // a hijacked WebSocket connection has no writer left
			_ = http.NewResponseController(w).Flush()
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), usageFlush)
		defer cancel()
		_ = gw.Flush(ctx)
	})
}
