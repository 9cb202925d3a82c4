package firestorecounters

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/iterator"

	"github.com/fngate/fngate/core/counters"
)

// The usage history (counters.History) lives in a collection of its own, <prefix>usage, in
// the counters' database. A key's day is sharded like its counters (a hot key's history
// would otherwise be one document written by every request, past Firestore's sustained
// write rate per document): <escaped key>#<YYYY-MM-DD>#<n>, each holding part of the day:
//
//	key, day  the key and the day
//	m         {escaped model: {r, i, o, c}}: requests, input and output tokens, nano-USD
//	expires   the end of the day plus counters.HistoryDays; a TTL policy deletes it then
//
// A request adds with one merge write of increments to a shard picked at random. A range of
// days is one query on document ids (the __name__ index every collection has, so no
// composite index), from the first day's first shard to the day after the last.
//
// Model names become map keys escaped (escapeModel): every byte but letters, digits, '-'
// and '.' is %XX, so '/', ':', '`' and a name Firestore reserves (__x__) are all stored
// safely; a '.' is left as it is, since the client quotes every key it sends as one
// field-path segment.
const (
	UsageCollection = "usage"
	// maxModel bounds a model name: a map key is at most 1,500 bytes once escaped.
	maxModel = 512
)

// HistoryExpires is when the TTL policy deletes a document of day: the end of the day plus
// counters.HistoryDays.
func HistoryExpires(day time.Time) time.Time {
	return day.UTC().Truncate(24*time.Hour).AddDate(0, 0, counters.HistoryDays+1)
}

func escapeModel(m string) string {
	var b strings.Builder
	for i := 0; i < len(m); i++ {
		c := m[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

func (s *Store) usageDoc(key, day string, shard int) string {
	return url.PathEscape(key) + "#" + day + "#" + strconv.Itoa(shard)
}

// AddUsage adds u to one shard of the key's day.
func (s *Store) AddUsage(ctx context.Context, key string, at time.Time, model string, u counters.Usage) error {
	if key == "" || model == "" || len(model) > maxModel {
		return fmt.Errorf("firestorecounters: usage of %q: a key and a model name of 1 to %d bytes are needed", key, maxModel)
	}
	day := counters.Day(at)
	data := map[string]any{
		"key": key,
		"day": day,
		"m": map[string]any{escapeModel(model): map[string]any{
			"r": firestore.Increment(u.Requests),
			"i": firestore.Increment(u.InputTokens),
			"o": firestore.Increment(u.OutputTokens),
			"c": firestore.Increment(u.CostNanoUSD),
		}},
		TTLField: HistoryExpires(at),
	}
	if _, err := s.usage.Doc(s.usageDoc(key, day, rand.IntN(s.shards))).Set(ctx, data, firestore.MergeAll); err != nil {
		return fmt.Errorf("firestorecounters: add usage of %s: %w", key, err)
	}
	return nil
}

// Usage reads the key's days from from to to in one query, adding up their shards.
func (s *Store) Usage(ctx context.Context, key string, from, to time.Time) ([]counters.DayUsage, error) {
	days := counters.Days(from, to)
	if len(days) == 0 {
		return nil, nil
	}
	last, _ := time.Parse(time.DateOnly, days[len(days)-1])
	esc := url.PathEscape(key)
	q := s.usage.
		Where(firestore.DocumentID, ">=", s.usage.Doc(esc+"#"+days[0])).
		Where(firestore.DocumentID, "<", s.usage.Doc(esc+"#"+counters.Day(last.AddDate(0, 0, 1))))
	it := q.Documents(ctx)
	defer it.Stop()
	byDay := map[string]map[string]counters.Usage{}
	for {
		snap, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("firestorecounters: usage of %s: %w", key, err)
		}
		var d struct {
			Key string                      `firestore:"key"`
			Day string                      `firestore:"day"`
			M   map[string]map[string]int64 `firestore:"m"`
		}
		if err := snap.DataTo(&d); err != nil {
			return nil, fmt.Errorf("firestorecounters: usage %s: %w (%w)", snap.Ref.ID, counters.ErrCorrupt, err)
		}
		if d.Key != key {
			continue // not this key's, though its id sorts among them
		}
		if byDay[d.Day] == nil {
			byDay[d.Day] = map[string]counters.Usage{}
		}
		for em, v := range d.M {
			m, err := url.PathUnescape(em)
			if err != nil {
				return nil, fmt.Errorf("firestorecounters: usage %s: %w (model %q)", snap.Ref.ID, counters.ErrCorrupt, em)
			}
			u := byDay[d.Day][m]
			u.Add(counters.Usage{Requests: v["r"], InputTokens: v["i"], OutputTokens: v["o"], CostNanoUSD: v["c"]})
			byDay[d.Day][m] = u
		}
	}
	var out []counters.DayUsage
	for _, day := range days {
		models := make([]string, 0, len(byDay[day]))
		for m := range byDay[day] {
			models = append(models, m)
		}
		sort.Strings(models)
		for _, m := range models {
			out = append(out, counters.DayUsage{Day: day, Model: m, Usage: byDay[day][m]})
		}
	}
	return out, nil
}

var _ counters.History = (*Store)(nil)
