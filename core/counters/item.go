package counters

import "time"

// item is one key's counters as plain values: its newest windows and its fields (see Field).
// The memory store keeps one per key under a mutex; the file store loads them, applies one
// operation and saves them under a file lock. Both get the same semantics from this code, and
// the DynamoDB and Firestore stores implement the same with their own conditional writes.
type item struct {
	Windows Windows          `json:"windows"`
	Fields  map[string]int64 `json:"fields,omitempty"`
	Expires time.Time        `json:"expires"`
}

func (it *item) take(w Windows, amounts []Amount) (Counts, bool) {
	w = w.Later(it.Windows)
	names := make([]string, len(amounts))
	for i, a := range amounts {
		names[i] = Field(a.Counter, w)
		if a.Limited && it.Fields[names[i]] > a.Max {
			return it.counts(w, amounts, names), false
		}
	}
	if it.Windows != w {
		it.prune(w)
		it.Windows, it.Expires = w, w.Expires()
	}
	if it.Fields == nil {
		it.Fields = map[string]int64{}
	}
	for i, a := range amounts {
		it.Fields[names[i]] += a.N
	}
	return it.counts(w, amounts, names), true
}

func (it *item) add(w Windows, amounts []Amount) {
	if it.Fields == nil {
		it.Fields = map[string]int64{}
	}
	for _, a := range amounts {
		if w.Of(a.Kind) < it.Windows.Of(a.Kind) {
			continue // that window has passed here
		}
		it.Fields[Field(a.Counter, w)] += a.N
	}
}

// prune drops the fields of windows that have passed.
func (it *item) prune(w Windows) {
	for name := range it.Fields {
		if _, stale := Current(name, w); stale {
			delete(it.Fields, name)
		}
	}
}

func (it *item) counts(w Windows, amounts []Amount, names []string) Counts {
	c := Counts{Windows: w, Values: make(map[Counter]int64, len(amounts))}
	for i, a := range amounts {
		c.Values[a.Counter] = it.Fields[names[i]]
	}
	return c
}

func (it *item) read(w Windows) Counts {
	w = w.Later(it.Windows)
	c := Counts{Windows: w, Values: map[Counter]int64{}}
	Collect(c.Values, it.Fields, w)
	return c
}
