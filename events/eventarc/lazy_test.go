package eventarc

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestLazyRetriesAFailedBuildAfterAPause(t *testing.T) {
	calls := 0
	fail := true
	l := &lazy{retryAfter: 50 * time.Millisecond, build: func(context.Context) (*Handler, error) {
		calls++
		if fail {
			return nil, errors.New("no credentials")
		}
		return &Handler{}, nil
	}}
	ctx := context.Background()
	if _, err := l.get(ctx); err == nil {
		t.Fatal("a failed build returned no error")
	}
	fail = false
	if _, err := l.get(ctx); err == nil || calls != 1 {
		t.Fatalf("rebuilt within the pause: calls %d, err %v", calls, err)
	}
	time.Sleep(60 * time.Millisecond)
	h, err := l.get(ctx)
	if err != nil || h == nil || calls != 2 {
		t.Fatalf("after the pause: %v, %v, calls %d", h, err, calls)
	}
	if _, _ = l.get(ctx); calls != 2 {
		t.Fatalf("a built handler was rebuilt: calls %d", calls)
	}
}
