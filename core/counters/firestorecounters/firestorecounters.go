// Package firestorecounters keeps gateway keys' counters in Firestore (native mode), for the
// GCP functions.
//
// Firestore sustains about one write per second to a document (a soft limit: more raises
// latency and contention), and a transaction that reads and writes a hot document is retried
// over and over by its competitors. So each key's counters are sharded, the way Firestore
// recommends for counters: Shards documents per key, <escaped key>#<n> in the collection
// <prefix>counters, each holding part of every count:
//
//	key      the key's name
//	w        {m, d, M}: the newest minute, day and month windows the shard has seen
//	c        {counters.Field name: count}: this shard's share of each window's count
//	expires  the end of the shard's month window; a TTL policy deletes idle keys on it
//
// An admission reads the key's shards in one batched read (BatchGetDocuments), adds up the
// counts of the current windows, and if every limit holds writes its charge to one shard
// picked at random: one merge write of increments (and of Maximum on the windows, which
// therefore only move forward), deleting that shard's fields of windows that have passed. No
// transaction: two admissions that read before either wrote may both pass, so a limit can be
// exceeded by at most the number of admissions in flight at the moment it is crossed, which
// is the bound the gateway documents, while the writes spread over the shards.
//
//	firestorecounters.go  the counters (counters.Store)
//	history.go            the usage history (counters.History): sharded documents per key and UTC day
package firestorecounters

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"

	"cloud.google.com/go/firestore"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
)

// Names the IaC uses: the collection (after the prefix) and the field of its TTL policy.
const (
	DefaultPrefix = "fngate_"
	Collection    = "counters"
	TTLField      = "expires"
	// DefaultShards spreads a key's writes over 8 documents: about 8 sustained writes a
	// second per key before Firestore's per-document limit, for 8 document reads per request.
	DefaultShards = 8
)

// Store is a counters.Store on Firestore.
type Store struct {
	c      *firestore.Client
	col    *firestore.CollectionRef
	usage  *firestore.CollectionRef
	shards int
}

// New returns a store on the client's database; an empty prefix means DefaultPrefix and
// shards < 1 DefaultShards.
func New(c *firestore.Client, prefix string, shards int) *Store {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if shards < 1 {
		shards = DefaultShards
	}
	return &Store{c: c, col: c.Collection(prefix + Collection), usage: c.Collection(prefix + UsageCollection), shards: shards}
}

func (s *Store) ref(key string, shard int) *firestore.DocumentRef {
	return s.col.Doc(url.PathEscape(key) + "#" + strconv.Itoa(shard))
}

// shard is one document as read.
type shard struct {
	w      counters.Windows
	fields map[string]int64
}

func (s *Store) load(ctx context.Context, key string) ([]shard, error) {
	refs := make([]*firestore.DocumentRef, s.shards)
	for i := range refs {
		refs[i] = s.ref(key, i)
	}
	snaps, err := s.c.GetAll(ctx, refs)
	if err != nil {
		return nil, fmt.Errorf("firestorecounters: read %s: %w", key, err)
	}
	out := make([]shard, len(snaps))
	for i, snap := range snaps {
		if !snap.Exists() {
			continue
		}
		var d struct {
			W counters.Windows `firestore:"w"`
			C map[string]int64 `firestore:"c"`
		}
		if err := snap.DataTo(&d); err != nil {
			return nil, fmt.Errorf("firestorecounters: %s: %w (%w)", snap.Ref.ID, counters.ErrCorrupt, err)
		}
		out[i] = shard{w: d.W, fields: d.C}
	}
	return out, nil
}

func sum(shards []shard, w counters.Windows) map[counters.Counter]int64 {
	values := map[counters.Counter]int64{}
	for _, sh := range shards {
		counters.Collect(values, sh.fields, w)
	}
	return values
}

func (s *Store) Take(ctx context.Context, key string, w counters.Windows, amounts []counters.Amount) (counters.Counts, bool, error) {
	shards, err := s.load(ctx, key)
	if err != nil {
		return counters.Counts{}, false, err
	}
	for _, sh := range shards {
		w = w.Later(sh.w)
	}
	values := sum(shards, w)
	c := counters.Counts{Windows: w, Values: make(map[counters.Counter]int64, len(amounts))}
	for _, a := range amounts {
		c.Values[a.Counter] = values[a.Counter]
	}
	for _, a := range amounts {
		if a.Limited && values[a.Counter] > a.Max {
			return c, false, nil
		}
	}
	i := rand.IntN(s.shards)
	fields := map[string]any{}
	for name := range shards[i].fields {
		if _, stale := counters.Current(name, w); stale {
			fields[name] = firestore.Delete
		}
	}
	incrementInto(fields, w, amounts)
	data := map[string]any{
		"key": key,
		"w": map[string]any{
			"m": firestore.FieldTransformMaximum(w.Minute),
			"d": firestore.FieldTransformMaximum(w.Day),
			"M": firestore.FieldTransformMaximum(w.Month),
		},
		"c":      fields,
		TTLField: w.Expires(),
	}
	if _, err := s.ref(key, i).Set(ctx, data, firestore.MergeAll); err != nil {
		return counters.Counts{}, false, fmt.Errorf("firestorecounters: take %s: %w", key, err)
	}
	for _, a := range amounts {
		c.Values[a.Counter] += a.N
	}
	return c, true, nil
}

// incrementInto adds one increment per counter (summing amounts on one counter).
func incrementInto(fields map[string]any, w counters.Windows, amounts []counters.Amount) {
	sums := map[string]int64{}
	for _, a := range amounts {
		sums[counters.Field(a.Counter, w)] += a.N
	}
	for name, n := range sums {
		fields[name] = firestore.Increment(n)
	}
}

func (s *Store) Add(ctx context.Context, key string, w counters.Windows, amounts []counters.Amount) error {
	if len(amounts) == 0 {
		return nil
	}
	fields := map[string]any{}
	incrementInto(fields, w, amounts)
	data := map[string]any{"key": key, "c": fields, TTLField: w.Expires()}
	if _, err := s.ref(key, rand.IntN(s.shards)).Set(ctx, data, firestore.MergeAll); err != nil {
		return fmt.Errorf("firestorecounters: add %s: %w", key, err)
	}
	return nil
}

func (s *Store) Read(ctx context.Context, key string, w counters.Windows) (counters.Counts, error) {
	shards, err := s.load(ctx, key)
	if err != nil {
		return counters.Counts{}, err
	}
	for _, sh := range shards {
		w = w.Later(sh.w)
	}
	return counters.Counts{Windows: w, Values: sum(shards, w)}, nil
}

var _ counters.Store = (*Store)(nil)

// Open returns a store on the Firestore database c names (project, database, prefix, shards)
// with Application Default Credentials (FIRESTORE_EMULATOR_HOST is honoured), and the
// client's Close. The client dials on its first call.
func Open(ctx context.Context, c config.Counters) (*Store, func() error, error) {
	if c.Project == "" {
		return nil, nil, errors.New("counters: store firestore needs a project (counters.project)")
	}
	database := c.Database
	if database == "" {
		database = firestore.DefaultDatabaseID
	}
	client, err := firestore.NewClientWithDatabase(ctx, c.Project, database)
	if err != nil {
		return nil, nil, fmt.Errorf("counters: %w", err)
	}
	return New(client, c.Prefix, c.Shards), client.Close, nil
}
