// Package counters keeps the rate-limit and budget counters of gateway keys in a store every
// gateway instance shares, so a limit holds across a hundred function instances as it does
// in one process.
//
//	counters.go   the Store contract: counters, amounts, counts
//	windows.go    the minute, UTC day and UTC month windows a charge falls in
//	item.go       one key's counters as plain values: the semantics memory and file share
//	memory.go     a Store in process memory (one instance; tests)
//	history.go    History: usage per key, UTC day and model, kept a year (and MemoryHistory)
//	file.go       a Store and History in one JSON file under a file lock (processes on one machine: make run)
//	regional.go   Regional: an item per key and region, summed on read (counters.across_regions: per_region)
//	dynamocounters/         DynamoDB: one item per key, one conditional UpdateItem per admission;
//	                        history in an item per key and day (history.go)
//	firestorecounters/      Firestore: sharded documents per key, one read and one write per admission;
//	                        history in sharded documents per key and day (history.go)
//	internal/counterstest/  the conformance suites every Store and every History passes
//
// A key's counters are named by kind (requests and tokens per minute, spend per day and per
// month) and scope (the key as a whole, or one of its per-model rules). Each counter lives in
// its window: a field of the store is named by its window too, so a new minute starts from
// nothing without anyone resetting anything, and a store drops fields of windows that have
// passed as it writes. Windows only move forward: when another instance's clock is ahead and
// has charged a newer window, a store charges that one (windows.go).
package counters

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Kind is what a counter counts; each kind has its window.
type Kind uint8

// Kinds of counter.
const (
	Requests   Kind = iota // requests per minute
	Tokens                 // tokens (input plus output) per minute
	SpendDay               // nano-USD per UTC day
	SpendMonth             // nano-USD per UTC calendar month
)

// Kinds lists every kind, in order.
var Kinds = [...]Kind{Requests, Tokens, SpendDay, SpendMonth}

var kindLetters = [...]byte{Requests: 'r', Tokens: 't', SpendDay: 'd', SpendMonth: 'm'}

func (k Kind) String() string {
	return [...]string{Requests: "requests", Tokens: "tokens", SpendDay: "spend_day", SpendMonth: "spend_month"}[k]
}

// Counter names one count of a key: a kind within a scope ("" is the key as a whole, any other
// scope one of the key's per-model rules).
type Counter struct {
	Scope string
	Kind  Kind
}

// Amount is what one charge adds to one counter. When Limited, the charge is admitted only
// while the counter holds at most Max before the add.
type Amount struct {
	Counter
	N       int64
	Max     int64
	Limited bool
}

// Counts are a key's counters in a set of windows.
type Counts struct {
	// Windows are the windows the counts are in: the caller's, or newer ones the store holds
	// because another instance's clock is ahead.
	Windows Windows
	Values  map[Counter]int64
}

// Value is one counter's count (0 when the store has none).
func (c Counts) Value(scope string, k Kind) int64 { return c.Values[Counter{scope, k}] }

// Store holds the counters of every key, shared by every gateway instance.
type Store interface {
	// Take charges amounts to the key's counters in windows w, all or none: only if every
	// limited amount's counter is at most its Max. A store that holds newer windows than w
	// charges those. It returns the counts of the amounts' counters after the charge when
	// admitted, or as they stand when refused.
	Take(ctx context.Context, key string, w Windows, amounts []Amount) (Counts, bool, error)
	// Add adds amounts (negative ones give back) to the key's counters in windows w without a
	// condition: settling what a Take reserved. An amount whose window the store has moved past
	// never counts in a newer one.
	Add(ctx context.Context, key string, w Windows, amounts []Amount) error
	// Read returns every counter the key has in windows w (or newer ones the store holds).
	Read(ctx context.Context, key string, w Windows) (Counts, error)
}

// ErrCorrupt is a stored value the store cannot read.
var ErrCorrupt = errors.New("counters: unreadable stored counter")

// Field is the stored name of counter c in windows w: the kind's letter, its window and the
// scope, "r|29031234|" for the key's requests in one minute. Stores keep counters under these
// names so that each window's count is a field of its own.
func Field(c Counter, w Windows) string {
	b := make([]byte, 0, 16+len(c.Scope))
	b = append(b, kindLetters[c.Kind], '|')
	b = strconv.AppendInt(b, w.Of(c.Kind), 10)
	b = append(b, '|')
	return string(append(b, c.Scope...))
}

// ParseField reads a Field name back: its counter and window number.
func ParseField(name string) (c Counter, window int64, ok bool) {
	if len(name) < 4 || name[1] != '|' {
		return Counter{}, 0, false
	}
	k := -1
	for i, l := range kindLetters {
		if l == name[0] {
			k = i
		}
	}
	num, scope, found := strings.Cut(name[2:], "|")
	if k < 0 || !found {
		return Counter{}, 0, false
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return Counter{}, 0, false
	}
	return Counter{Scope: scope, Kind: Kind(k)}, n, true
}

// Current reports whether a stored field is in windows w (it counts), and whether it is stale
// (its window has passed, so a store may drop it). A field of a window newer than w is
// neither: it belongs to an instance whose clock is ahead.
func Current(name string, w Windows) (current, stale bool) {
	c, n, ok := ParseField(name)
	if !ok {
		return false, false
	}
	cur := w.Of(c.Kind)
	return n == cur, n < cur
}

// Collect adds the counts of the stored fields that are current in w to values.
func Collect(values map[Counter]int64, fields map[string]int64, w Windows) {
	for name, v := range fields {
		if cur, _ := Current(name, w); cur {
			c, _, _ := ParseField(name)
			values[c] += v
		}
	}
}

// Warm reads once in the background, so that a cloud store's client has its connection (and
// its credentials) before the first limited request waits on it within the counters' short
// timeout. What it finds, and any error, is not used: the first request reports its own.
func Warm(s Store, within time.Duration) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		_, _ = s.Read(ctx, "fngate:warm-up", At(time.Now()))
	}()
}
