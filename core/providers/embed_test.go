package providers

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fngate/fngate/core/llm"
)

func TestBatchBounds(t *testing.T) {
	cost := func(sizes ...int) func(int) int { return func(i int) int { return sizes[i] } }
	for _, tc := range []struct {
		n, size int
		cost    func(int) int
		budget  int
		want    []int
	}{
		{1, 1, nil, 0, []int{0, 1}},
		{5, 1, nil, 0, []int{0, 1, 2, 3, 4, 5}},
		{100, 96, nil, 0, []int{0, 96, 100}},
		{96, 96, nil, 0, []int{0, 96}},
		{4, 250, cost(10, 10, 10, 10), 25, []int{0, 2, 4}},
		// An input above the budget goes alone.
		{3, 250, cost(5, 100, 5), 25, []int{0, 1, 2, 3}},
	} {
		if got := batchBounds(tc.n, tc.size, tc.cost, tc.budget); !slices.Equal(got, tc.want) {
			t.Errorf("n %d size %d budget %d: %v, want %v", tc.n, tc.size, tc.budget, got, tc.want)
		}
	}
}

// Batches run at most parallel at once, each in its place; usage adds up, and a count one
// batch left out is left out of the sum.
func TestEmbedBatches(t *testing.T) {
	var running, peak atomic.Int32
	var mu sync.Mutex
	seen := map[int]int{}
	u, err := EmbedBatches(context.Background(), 10, 3, 2, nil, 0, func(_ context.Context, lo, hi int) (*llm.Usage, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		mu.Lock()
		seen[lo] = hi
		mu.Unlock()
		return &llm.Usage{InputTokens: llm.Int(hi - lo), TotalTokens: llm.Int(hi - lo)}, nil
	})
	if err != nil || *u.InputTokens != 10 || *u.TotalTokens != 10 {
		t.Fatalf("usage %+v, %v", u, err)
	}
	if peak.Load() > 2 || len(seen) != 4 || seen[9] != 10 {
		t.Errorf("peak %d, batches %v", peak.Load(), seen)
	}
	u, _ = EmbedBatches(context.Background(), 4, 1, 4, nil, 0, func(_ context.Context, lo, hi int) (*llm.Usage, error) {
		if lo == 2 {
			return &llm.Usage{}, nil
		}
		return &llm.Usage{InputTokens: llm.Int(1)}, nil
	})
	if u.InputTokens != nil {
		t.Errorf("a batch without a count summed to %d", *u.InputTokens)
	}
}

// The first failure is the answer, and the batches still running see their context end.
func TestEmbedBatchesFailure(t *testing.T) {
	boom := &Error{Class: RateLimited, Message: "throttled"}
	var cancelled atomic.Int32
	started := make(chan struct{}, 50)
	_, err := EmbedBatches(context.Background(), 50, 1, 4, nil, 0, func(ctx context.Context, lo, _ int) (*llm.Usage, error) {
		if lo == 3 { // fail once batches 4, 5 and 6 hold the other slots
			for range 3 {
				<-started
			}
			return nil, boom
		}
		if lo > 3 {
			started <- struct{}{}
			<-ctx.Done()
			cancelled.Add(1)
			return nil, errors.New("cancelled " + strconv.Itoa(lo))
		}
		return &llm.Usage{}, nil
	})
	if err != boom {
		t.Fatalf("error %v, want the throttling", err)
	}
	if cancelled.Load() != 3 {
		t.Errorf("%d batches saw the cancellation; want the 3 running, and none started after", cancelled.Load())
	}
}

func TestParseVector(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []float32
	}{
		{`[]`, []float32{}},
		{` [ 0.5 , -1e-3,2E+2 ,0] `, []float32{0.5, -0.001, 200, 0}},
		{`[-0.006929283495992422]`, []float32{-0.0069292835}},
		{`[3.4028234663852886e38]`, []float32{math.MaxFloat32}},
	} {
		got, err := ParseVector([]byte(tc.in))
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v %v", tc.in, got, err)
		}
	}
	for _, in := range []string{`{}`, `["0.5"]`, `[[0.5]]`, `[null]`, `[true]`, `[1e39]`, `[1,]`, `[1 2]`, `[1`, `5`} {
		if got, err := ParseVector([]byte(in)); err == nil {
			t.Errorf("%s: read as %v", in, got)
		}
	}
}

func TestDecodeBase64Vector(t *testing.T) {
	got, err := DecodeBase64Vector([]byte("AAAAPwAAgL8=")) // 0.5, -1
	if err != nil || !slices.Equal(got, []float32{0.5, -1}) {
		t.Errorf("%v %v", got, err)
	}
	for _, in := range []string{"AAAAPwAA", "not base64!", "AAAAPwAA\ngL8=", "AAAAPwAAgL8=\r\n"} {
		if _, err := DecodeBase64Vector([]byte(in)); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// An upstream's Content-Length is a promise: a large one with few bytes behind it must not
// make the gateway allocate what was promised.
func TestReadBoundedDoesNotAllocateWhatIsOnlyPromised(t *testing.T) {
	const promised, limit = 200 << 20, 256 << 20
	b, err := ReadBounded(strings.NewReader(`{"data":[]}`), promised, limit)
	if err != nil || string(b) != `{"data":[]}` {
		t.Fatalf("ReadBounded = %q, %v", b, err)
	}
	if cap(b) > maxPresized+1 {
		t.Errorf("a %d-byte promise allocated %d bytes for 11 sent", promised, cap(b))
	}
	if _, err := ReadBounded(strings.NewReader(strings.Repeat("x", 2048)), 100, 1024); err == nil {
		t.Error("an answer over the limit was read")
	}
}
