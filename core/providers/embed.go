package providers

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync"

	"github.com/fngate/fngate/core/llm"
)

// Embedder is implemented by providers that serve embeddings (POST /v1/embeddings). The
// gateway finds it by type assertion: a route of an embedding model on a provider without it
// stops the start.
//
// As with Provider, CheckEmbedRoute and CheckEmbed are asked before any network I/O and Embed
// trusts their answers. The gateway checks what Embed returns (one vector per input, each of
// the length asked, finite), so a provider need not.
type Embedder interface {
	// CheckEmbedRoute reports why a route can never serve its embedding model: the upstream
	// model is not one this provider embeds with, cannot return t.Dimensions-long vectors,
	// or has no t.Task. Asked once per route when the gateway is built, with no request.
	CheckEmbedRoute(t Target) error
	// CheckEmbed reports why this route cannot serve req as asked (token ids it cannot
	// read, dimensions it cannot shorten to, a text over its limit): a 400 naming the field.
	CheckEmbed(req *llm.EmbedRequest, t Target) *llm.Error
	// Embed returns the vectors of req's inputs, in their order, splitting them into as
	// many upstream calls as the upstream's batch limit requires. Failures are *Error.
	Embed(ctx context.Context, req *llm.EmbedRequest, t Target) (*llm.Embeddings, error)
}

// Dimensions is the vector length req asks of route t: the client's, else the gateway
// model's.
func Dimensions(req *llm.EmbedRequest, t Target) int {
	if req.Dimensions != nil {
		return *req.Dimensions
	}
	return t.Dimensions
}

// EmbedBatches splits n inputs into consecutive batches of at most size inputs (and, when
// cost is given, of at most budget in summed cost, an input costlier than budget alone in
// its batch), calls embed for each batch's bounds [lo, hi), at most parallel at once, and
// returns the batches' usage summed. The first failure cancels the batches still running and
// is returned. An upstream whose batch limit is below the gateway's serves a large request
// this way; embed writes each batch's vectors in place.
func EmbedBatches(ctx context.Context, n, size, parallel int, cost func(i int) int, budget int,
	embed func(ctx context.Context, lo, hi int) (*llm.Usage, error)) (llm.Usage, error) {
	bounds := batchBounds(n, size, cost, budget)
	usages := make([]*llm.Usage, len(bounds)-1)
	if len(usages) == 1 {
		u, err := embed(ctx, 0, n)
		usages[0] = u
		return sumUsage(usages), err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
		slots = make(chan struct{}, max(parallel, 1))
	)
	for i := range usages {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			u, err := embed(ctx, bounds[i], bounds[i+1])
			mu.Lock()
			defer mu.Unlock()
			usages[i] = u
			if err != nil && first == nil {
				first = err
				cancel(err)
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		// The caller's context ended before every batch started: say why, as a call would.
		first = AsError(ctx, context.Cause(ctx), "")
	}
	return sumUsage(usages), first
}

// batchBounds returns the bounds of the batches: batch i is [b[i], b[i+1]).
func batchBounds(n, size int, cost func(i int) int, budget int) []int {
	b := []int{0}
	for lo := 0; lo < n; {
		hi, spent := lo, 0
		for hi < n && hi-lo < size {
			if cost != nil {
				c := cost(hi)
				if hi > lo && spent+c > budget {
					break
				}
				spent += c
			}
			hi++
		}
		b = append(b, hi)
		lo = hi
	}
	return b
}

// sumUsage adds up the batches' counts. A count that some batch did not report is left out
// of the sum, which would otherwise understate it.
func sumUsage(us []*llm.Usage) llm.Usage {
	var total llm.Usage
	sum := func(get func(*llm.Usage) *int) *int {
		n := 0
		for _, u := range us {
			if u == nil || get(u) == nil {
				return nil
			}
			n += *get(u)
		}
		return llm.Int(n)
	}
	total.InputTokens = sum(func(u *llm.Usage) *int { return u.InputTokens })
	total.TotalTokens = sum(func(u *llm.Usage) *int { return u.TotalTokens })
	return total
}

// EmbedAnswerLimit bounds an upstream's embeddings answer for n inputs of dims dimensions:
// room for each number written out in full (24 bytes covers a float64's longest decimal and
// its comma), each item's framing, and a megabyte for the rest. An upstream is untrusted
// input: the bound follows what was asked, not what it sends.
func EmbedAnswerLimit(n, dims int) int64 {
	return 1<<20 + int64(n)*(int64(dims)*24+512)
}

// maxPresized is the largest buffer ReadBounded allocates before the bytes arrive.
const maxPresized = 8 << 20

// ReadBounded reads a whole answer of at most limit bytes, and refuses a longer one. An
// embeddings answer runs to hundreds of kilobytes: when the upstream says how long it is
// (size, Content-Length, -1 when unknown) it is read into one buffer of that size, not grown
// by doubling through a dozen copies as io.ReadAll grows it.
func ReadBounded(r io.Reader, size, limit int64) ([]byte, error) {
	if size < 0 || size > limit {
		size = 512
	}
	// A Content-Length is the upstream's word, not bytes in hand: beyond a few megabytes the
	// buffer grows as bytes arrive, so an upstream that promises much and sends little costs
	// no more than it sent.
	size = min(size, maxPresized)
	b := make([]byte, 0, size+1) // +1: room to find the end without growing
	lr := io.LimitReader(r, limit+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // as io.ReadAll grows
		}
		n, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return b, err
		}
	}
	if int64(len(b)) > limit {
		return b, errors.New("the answer is larger than " + strconv.FormatInt(limit, 10) + " bytes")
	}
	return b, nil
}
