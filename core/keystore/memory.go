package keystore

import (
	"context"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Memory is a Store in the process's memory, for make run and tests: every instance keeps
// its own, so the functions refuse it (key_store: memory).
type Memory struct {
	mu     sync.Mutex
	keys   map[string]*Key     // by id, tombstones included
	hashes map[[32]byte]string // live keys' hashes -> id
	names  map[string]string   // live keys' names -> id
	audit  []*Entry            // oldest first
}

// NewMemory returns an empty memory store.
func NewMemory() *Memory {
	return &Memory{keys: map[string]*Key{}, hashes: map[[32]byte]string{}, names: map[string]string{}}
}

func (s *Memory) Create(_ context.Context, k *Key, e *Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.keys[k.ID]; ok {
		return ErrExists
	}
	if _, ok := s.hashes[k.Hash]; ok {
		return ErrExists
	}
	if _, ok := s.names[k.Name]; ok {
		return ErrNameTaken
	}
	c := k.Clone()
	c.Version = 1
	s.keys[c.ID], s.hashes[c.Hash], s.names[c.Name] = c, c.ID, c.ID
	s.append(e)
	return nil
}

func (s *Memory) Update(_ context.Context, k *Key, e *Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.keys[k.ID]
	switch {
	case !ok:
		return ErrNotFound
	case old.Version != k.Version-1 || old.Deleted:
		return ErrConflict
	}
	if !k.Deleted {
		if id, ok := s.hashes[k.Hash]; ok && id != k.ID {
			return ErrExists
		}
		if id, ok := s.names[k.Name]; ok && id != k.ID {
			return ErrNameTaken
		}
	}
	delete(s.hashes, old.Hash)
	delete(s.names, old.Name)
	c := k.Clone()
	s.keys[c.ID] = c
	if !c.Deleted {
		s.hashes[c.Hash], s.names[c.Name] = c.ID, c.ID
	}
	s.append(e)
	return nil
}

func (s *Memory) Record(_ context.Context, e *Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.append(e)
	return nil
}

func (s *Memory) append(e *Entry) {
	if e != nil {
		c := *e
		s.audit = append(s.audit, &c)
	}
}

func (s *Memory) Get(_ context.Context, id string) (*Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	if !ok {
		return nil, ErrNotFound
	}
	return k.Clone(), nil
}

func (s *Memory) ByHash(_ context.Context, hash [32]byte) (*Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.hashes[hash]
	if !ok {
		return nil, ErrNotFound
	}
	return s.keys[id].Clone(), nil
}

func (s *Memory) List(_ context.Context, q Query) (*KeyPage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.keys))
	for id, k := range s.keys {
		if id <= q.After || k.Deleted && !q.Deleted || q.Team != "" && k.Team != q.Team || q.Name != "" && k.Name != q.Name {
			continue
		}
		ids = append(ids, id)
	}
	sort.Strings(ids)
	n := PageLimit(q.Limit)
	page := &KeyPage{}
	for i, id := range ids {
		if i == n {
			page.Next = ids[i-1]
			break
		}
		page.Keys = append(page.Keys, s.keys[id].Clone())
	}
	return page, nil
}

func (s *Memory) Changed(_ context.Context, since time.Time) ([]*Key, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Key
	for _, k := range s.keys {
		if !k.Updated.Before(since) {
			out = append(out, k.Clone())
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Updated.Equal(out[j].Updated) {
			return out[i].Updated.Before(out[j].Updated)
		}
		return out[i].ID < out[j].ID
	})
	if len(out) > MaxChanges {
		return out[:MaxChanges], true, nil
	}
	return out, false, nil
}

func (s *Memory) Audit(_ context.Context, q AuditQuery) (*AuditPage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := PageLimit(q.Limit)
	page := &AuditPage{}
	started := q.After == ""
	for i := len(s.audit) - 1; i >= 0; i-- {
		e := s.audit[i]
		if !started {
			started = e.ID == q.After
			continue
		}
		if q.Target != "" && e.Target != q.Target || !q.Since.IsZero() && e.Time.Before(q.Since) || !q.Until.IsZero() && !e.Time.Before(q.Until) {
			continue
		}
		if len(page.Entries) == n {
			page.Next = page.Entries[n-1].ID
			break
		}
		c := *e
		page.Entries = append(page.Entries, &c)
	}
	return page, nil
}

// copy returns a store holding what s holds; keys and entries are never changed in place (a
// change stores a clone), so the copy shares them.
func (s *Memory) copy() *Memory {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &Memory{keys: make(map[string]*Key, len(s.keys)), hashes: make(map[[32]byte]string, len(s.hashes)),
		names: make(map[string]string, len(s.names)), audit: slices.Clone(s.audit)}
	maps.Copy(c.keys, s.keys)
	maps.Copy(c.hashes, s.hashes)
	maps.Copy(c.names, s.names)
	return c
}

// sortedKeys returns every key, tombstones included, in id order.
func (s *Memory) sortedKeys() []*Key {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Collect(maps.Values(s.keys))
	slices.SortFunc(out, func(a, b *Key) int { return strings.Compare(a.ID, b.ID) })
	return out
}
