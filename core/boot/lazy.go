package boot

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fngate/fngate/core/telemetry"
)

// BuildTimeout bounds one Lazy build; it does not follow the request that triggered it,
// whose client may leave while the other waiting requests still need the handler.
const BuildTimeout = 30 * time.Second

// Lazy builds a function's handler on its first request, once: a Cloud Functions instance
// registers its entry point before it knows it will serve, and concurrent first requests
// wait for the same build. A failed build is logged, answered by Failed, and tried again
// after RetryAfter: a transient secret read must not poison the instance for its lifetime,
// and the spacing keeps a broken config from hammering Secret Manager with every request of
// a busy instance.
type Lazy struct {
	Build      func(context.Context) (http.Handler, error)
	RetryAfter time.Duration
	// Failed answers a request while the build is failing, in the function's error shape.
	Failed http.HandlerFunc

	ready    atomic.Pointer[http.Handler]
	mu       sync.Mutex
	err      error
	failedAt time.Time
}

// Get returns the handler, building it if no build has succeeded yet.
func (l *Lazy) Get(ctx context.Context) (http.Handler, error) {
	if h := l.ready.Load(); h != nil {
		return *h, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if h := l.ready.Load(); h != nil {
		return *h, nil
	}
	if l.err != nil && time.Since(l.failedAt) < l.RetryAfter {
		return nil, l.err
	}
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), BuildTimeout)
	defer cancel()
	h, err := l.Build(bctx)
	if err != nil {
		l.err, l.failedAt = err, time.Now()
		telemetry.NewLogger(os.Stderr, telemetry.FormatFromEnv(""), nil).Error("start failed", slog.String("error", err.Error()))
		return nil, err
	}
	l.ready.Store(&h)
	l.err = nil
	return h, nil
}

func (l *Lazy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, err := l.Get(r.Context())
	if err != nil {
		l.Failed(w, r)
		return
	}
	h.ServeHTTP(w, r)
}
