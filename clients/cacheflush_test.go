package clients

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/gateway"
)

// cacheFlush is the Node tests' way to know a miss is cached before they ask again: a
// loopback endpoint of the test harness, apart from the gateway's own routes, whose POST
// returns once the gateways serve no request (the Node tests ask one thing at a time) and
// each gateway's cache writes are done. Gateway.Flush alone is not enough: the gateway
// queues a miss's write after the client has its last byte (core/gateway/cachewriter.go),
// so a client that asks at once can get in before the write is even queued; waiting for
// the handlers closes that gap.
type cacheFlush struct {
	gateways []*gateway.Gateway

	mu      sync.Mutex
	serving int           // requests the gateways are serving
	idle    chan struct{} // closed when serving drops to 0; nil while it is 0
}

// wrap is a gatewaytest.Serve wrap: it counts h's requests while they run.
func (f *cacheFlush) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		if f.serving++; f.idle == nil {
			f.idle = make(chan struct{})
		}
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			if f.serving--; f.serving == 0 {
				close(f.idle)
				f.idle = nil
			}
			f.mu.Unlock()
		}()
		h.ServeHTTP(w, r)
	})
}

// flush waits until no request is being served, then for the gateways' cache writes.
func (f *cacheFlush) flush(ctx context.Context) error {
	f.mu.Lock()
	idle := f.idle
	f.mu.Unlock()
	if idle != nil {
		select {
		case <-idle:
		case <-ctx.Done():
			return fmt.Errorf("requests still being served: %w", ctx.Err())
		}
	}
	var err error
	for _, g := range f.gateways {
		err = errors.Join(err, g.Flush(ctx))
	}
	return err
}

// serve serves the flush endpoint on loopback until the test ends and returns its URL.
func (f *cacheFlush) serve(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		if err := f.flush(ctx); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The flush endpoint must not return while a request is still in its handler after its
// client has the whole answer, which is when the gateway queues a miss's cache write.
func TestCacheFlushWaitsForARequestPastItsAnswer(t *testing.T) {
	f := &cacheFlush{}
	release, finished := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(f.wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "answer")
		w.(http.Flusher).Flush()
		<-release // the gateway's work after the answer
		close(finished)
	})))
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len("answer"))
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()

	for _, tc := range []struct {
		name    string
		timeout time.Duration
		release bool
	}{
		{name: "times out while the handler runs", timeout: 50 * time.Millisecond},
		{name: "returns once the handler has", timeout: 10 * time.Second, release: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			if tc.release {
				time.AfterFunc(50*time.Millisecond, func() { close(release) })
			}
			err := f.flush(ctx)
			if !tc.release {
				if err == nil {
					t.Fatal("flush returned while a request was being served")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-finished:
			default:
				t.Fatal("flush returned before the handler did")
			}
		})
	}
}
