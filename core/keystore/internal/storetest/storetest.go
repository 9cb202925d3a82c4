// Package storetest is the conformance suite every keystore.Store passes: memory, file,
// DynamoDB (against moto_server) and Firestore (against its emulator).
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
)

// Options describe a store's costs the suite allows for.
type Options struct {
	// RewritesAll stores (the file store) rewrite everything they hold on each change, so
	// MaxChanges+ keys take minutes; the suite leaves out the one check that needs that many
	// (a store answering Changed with the memory store's code, as the file store does, is
	// covered by the memory store's run).
	RewritesAll bool
	// Fill, when set, puts many new keys (Version 1, no audit entries) where the store's
	// emulator makes a change too slow for the checks that need hundreds of keys (moto
	// copies the table for every transaction); the store's reads are what those check.
	Fill func(t *testing.T, s keystore.Store, keys []*keystore.Key)
}

// Run checks that stores keep the Store contract. open returns a new, empty store for each
// subtest.
func Run(t *testing.T, open func(t *testing.T) keystore.Store, opt Options) {
	ctx := context.Background()
	// Times near now, as the gateway's reads ask (a store may bucket by time), a few hours
	// back so that changes span buckets.
	base := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Microsecond)

	t.Run("a created key reads back whole, with its audit entry", func(t *testing.T) {
		s := open(t)
		k := newKey("app", "team-a", base)
		k.Models = []string{"gpt-*", "claude-*"}
		k.Residency = "eu"
		k.RequestProfile = config.ProfileExtended
		k.RequestProfileIgnore = []string{config.IgnoreMessageNames}
		k.Rate = &config.Rate{RequestsPerMinute: 60, TokensPerMinute: 10000}
		k.Budget = &config.Budget{USDPerDay: 1.5, USDPerMonth: 20}
		k.PerModel = map[string]*config.ModelLimits{"gpt-*": {Rate: &config.Rate{RequestsPerMinute: 5}}}
		exp := base.Add(48 * time.Hour)
		k.ExpiresAt = &exp
		k.Owner, k.Description, k.Role = "ci@example.com", "the CI's key", keystore.RoleViewer
		e := entry("key.create", k.ID, base)
		e.After = json.RawMessage(`{"name":"app"}`)
		must(t, s.Create(ctx, k, e))

		want := k.Clone()
		want.Version = 1
		got, err := s.Get(ctx, k.ID)
		must(t, err)
		sameKey(t, "Get", got, want)
		got, err = s.ByHash(ctx, k.Hash)
		must(t, err)
		sameKey(t, "ByHash", got, want)
		page, err := s.List(ctx, keystore.Query{})
		must(t, err)
		if len(page.Keys) != 1 || page.Next != "" {
			t.Fatalf("List = %d keys, next %q; want the one key", len(page.Keys), page.Next)
		}
		sameKey(t, "List", page.Keys[0], want)
		entries := allAudit(t, s, keystore.AuditQuery{})
		if len(entries) != 1 {
			t.Fatalf("audit has %d entries, want 1", len(entries))
		}
		sameEntry(t, entries[0], e)

		// What a caller does with what it got does not reach the store.
		got.Models[0] = "changed"
		got.Rate.RequestsPerMinute = 1
		again, err := s.Get(ctx, k.ID)
		must(t, err)
		sameKey(t, "Get after the caller changed its copy", again, want)
	})

	t.Run("unknown ids and hashes are not found", func(t *testing.T) {
		s := open(t)
		if _, err := s.Get(ctx, keystore.NewID()); !errors.Is(err, keystore.ErrNotFound) {
			t.Errorf("Get of an unknown id: %v, want ErrNotFound", err)
		}
		_, h := keystore.NewSecret()
		if _, err := s.ByHash(ctx, h); !errors.Is(err, keystore.ErrNotFound) {
			t.Errorf("ByHash of an unknown hash: %v, want ErrNotFound", err)
		}
		k := newKey("ghost", "", base)
		k.Version = 2
		if err := s.Update(ctx, k, entry("key.update", k.ID, base)); !errors.Is(err, keystore.ErrNotFound) {
			t.Errorf("Update of an unknown id: %v, want ErrNotFound", err)
		}
		noAudit(t, s, 0)
	})

	t.Run("create refuses a taken name, id or hash and writes nothing", func(t *testing.T) {
		s := open(t)
		k := newKey("app", "", base)
		must(t, s.Create(ctx, k, entry("key.create", k.ID, base)))
		sameName := newKey("app", "", base)
		sameID := newKey("other", "", base)
		sameID.ID = k.ID
		sameHash := newKey("third", "", base)
		sameHash.Hash = k.Hash
		for _, tt := range []struct {
			what string
			k    *keystore.Key
			want error
		}{{"a taken name", sameName, keystore.ErrNameTaken}, {"a taken id", sameID, keystore.ErrExists}, {"a taken hash", sameHash, keystore.ErrExists}} {
			if err := s.Create(ctx, tt.k, entry("key.create", tt.k.ID, base)); !errors.Is(err, tt.want) {
				t.Errorf("Create with %s: %v, want %v", tt.what, err, tt.want)
			}
		}
		noAudit(t, s, 1)
		for _, name := range []string{"other", "third"} {
			if page, err := s.List(ctx, keystore.Query{Name: name, Deleted: true}); err != nil || len(page.Keys) != 0 {
				t.Errorf("List of %q after its refused create: %v, %v", name, page, err)
			}
		}
		got, err := s.Get(ctx, k.ID)
		must(t, err)
		if got.Name != "app" || got.Version != 1 {
			t.Errorf("the key whose id was reused reads %q v%d", got.Name, got.Version)
		}
		// A refused create claimed nothing.
		other := newKey("other", "", base)
		other.Hash = sameHash.Hash
		if err := s.Create(ctx, other, entry("key.create", other.ID, base)); !errors.Is(err, keystore.ErrExists) {
			t.Errorf("Create with the live key's hash again: %v, want ErrExists", err)
		}
		third := newKey("third", "", base)
		must(t, s.Create(ctx, third, entry("key.create", third.ID, base)))
	})

	t.Run("update writes the next version with its entry, or nothing on a stale version", func(t *testing.T) {
		s := open(t)
		k := newKey("app", "team-a", base)
		must(t, s.Create(ctx, k, entry("key.create", k.ID, base)))
		u := k.Clone()
		u.Version = 2
		u.Disabled = true
		u.Team = "team-b"
		u.Updated = base.Add(time.Minute)
		u.UpdatedBy = "oidc:https://idp#alice (alice@example.com)"
		must(t, s.Update(ctx, u, entry("key.disable", k.ID, u.Updated)))
		got, err := s.Get(ctx, k.ID)
		must(t, err)
		sameKey(t, "Get after the update", got, u)
		// ByHash says nothing of disabled: the caller asks Usable.
		if got, err := s.ByHash(ctx, k.Hash); err != nil || !got.Disabled {
			t.Errorf("ByHash of a disabled key: %v, %v; want it, disabled", got, err)
		}

		for _, v := range []int64{1, 2, 4} { // 1 and 2: versions already written; 4: one never read
			stale := u.Clone()
			stale.Version = v
			stale.Description = fmt.Sprintf("v%d", v)
			if err := s.Update(ctx, stale, entry("key.update", k.ID, base.Add(2*time.Minute))); !errors.Is(err, keystore.ErrConflict) {
				t.Errorf("Update naming version %d over version 2: %v, want ErrConflict", v, err)
			}
		}
		got, err = s.Get(ctx, k.ID)
		must(t, err)
		sameKey(t, "Get after the refused updates", got, u)
		noAudit(t, s, 2)
	})

	t.Run("a rename claims the new name and frees the old", func(t *testing.T) {
		s := open(t)
		a, b := newKey("a", "", base), newKey("b", "", base)
		must(t, s.Create(ctx, a, entry("key.create", a.ID, base)))
		must(t, s.Create(ctx, b, entry("key.create", b.ID, base)))
		taken := next(b, base.Add(time.Minute))
		taken.Name = "a"
		if err := s.Update(ctx, taken, entry("key.update", b.ID, base.Add(time.Minute))); !errors.Is(err, keystore.ErrNameTaken) {
			t.Fatalf("rename to a live key's name: %v, want ErrNameTaken", err)
		}
		noAudit(t, s, 2)
		renamed := next(b, base.Add(time.Minute))
		renamed.Name = "c"
		must(t, s.Update(ctx, renamed, entry("key.update", b.ID, base.Add(time.Minute))))
		fresh := newKey("b", "", base.Add(2*time.Minute))
		must(t, s.Create(ctx, fresh, entry("key.create", fresh.ID, base.Add(2*time.Minute))))
		again := newKey("c", "", base.Add(2*time.Minute))
		if err := s.Create(ctx, again, entry("key.create", again.ID, base)); !errors.Is(err, keystore.ErrNameTaken) {
			t.Errorf("create under the new name: %v, want ErrNameTaken", err)
		}
		// An update that keeps its own name is no clash with itself.
		same := next(renamed, base.Add(3*time.Minute))
		same.Description = "still c"
		must(t, s.Update(ctx, same, entry("key.update", b.ID, base.Add(3*time.Minute))))
	})

	t.Run("a rotation frees the old hash and claims the new", func(t *testing.T) {
		s := open(t)
		a, b := newKey("a", "", base), newKey("b", "", base)
		must(t, s.Create(ctx, a, entry("key.create", a.ID, base)))
		must(t, s.Create(ctx, b, entry("key.create", b.ID, base)))
		clash := next(a, base.Add(time.Minute))
		clash.Hash = b.Hash
		if err := s.Update(ctx, clash, entry("key.rotate", a.ID, base.Add(time.Minute))); !errors.Is(err, keystore.ErrExists) {
			t.Fatalf("rotation to another live key's hash: %v, want ErrExists", err)
		}
		if got, err := s.ByHash(ctx, a.Hash); err != nil || got.ID != a.ID {
			t.Fatalf("a refused rotation lost the old hash: %v, %v", got, err)
		}
		rotated := next(a, base.Add(time.Minute))
		_, rotated.Hash = keystore.NewSecret()
		must(t, s.Update(ctx, rotated, entry("key.rotate", a.ID, base.Add(time.Minute))))
		if _, err := s.ByHash(ctx, a.Hash); !errors.Is(err, keystore.ErrNotFound) {
			t.Errorf("ByHash of the secret before the rotation: %v, want ErrNotFound", err)
		}
		got, err := s.ByHash(ctx, rotated.Hash)
		must(t, err)
		sameKey(t, "ByHash of the new secret", got, rotated)
		// The old hash is free: a key may claim it (a secret is random, so this never happens
		// by chance; it shows nothing of the rotated key holds it any more).
		c := newKey("c", "", base.Add(2*time.Minute))
		c.Hash = a.Hash
		must(t, s.Create(ctx, c, entry("key.create", c.ID, base.Add(2*time.Minute))))
		if got, err := s.ByHash(ctx, a.Hash); err != nil || got.ID != c.ID {
			t.Errorf("ByHash of the freed hash: %v, %v; want %s", got, err, c.ID)
		}
		noAudit(t, s, 4)
	})

	t.Run("a deletion frees the name and the hash for good and keeps the tombstone", func(t *testing.T) {
		s := open(t)
		k := newKey("app", "team-a", base)
		must(t, s.Create(ctx, k, entry("key.create", k.ID, base)))
		d := next(k, base.Add(time.Minute))
		d.Deleted = true
		must(t, s.Update(ctx, d, entry("key.delete", k.ID, base.Add(time.Minute))))
		if _, err := s.ByHash(ctx, k.Hash); !errors.Is(err, keystore.ErrNotFound) {
			t.Errorf("ByHash of a deleted key: %v, want ErrNotFound", err)
		}
		got, err := s.Get(ctx, k.ID)
		must(t, err)
		sameKey(t, "Get of the tombstone", got, d)
		after := next(d, base.Add(2*time.Minute))
		after.Deleted = false
		if err := s.Update(ctx, after, entry("key.enable", k.ID, base.Add(2*time.Minute))); !errors.Is(err, keystore.ErrConflict) {
			t.Errorf("Update of a tombstone: %v, want ErrConflict", err)
		}
		if page, err := s.List(ctx, keystore.Query{}); err != nil || len(page.Keys) != 0 {
			t.Errorf("List without tombstones: %v, %v; want none", page, err)
		}
		// The name and the hash go to a new key, with a new id.
		again := newKey("app", "team-a", base.Add(3*time.Minute))
		again.Hash = k.Hash
		must(t, s.Create(ctx, again, entry("key.create", again.ID, base.Add(3*time.Minute))))
		if got, err := s.ByHash(ctx, k.Hash); err != nil || got.ID != again.ID {
			t.Errorf("ByHash after the name's new key: %v, %v; want %s", got, err, again.ID)
		}
		page, err := s.List(ctx, keystore.Query{Name: "app", Deleted: true})
		must(t, err)
		if ids := idsOf(page.Keys); !slices.Equal(ids, sorted(k.ID, again.ID)) {
			t.Errorf("List of the name with tombstones = %v, want both", ids)
		}
		page, err = s.List(ctx, keystore.Query{Name: "app"})
		must(t, err)
		if ids := idsOf(page.Keys); !slices.Equal(ids, []string{again.ID}) {
			t.Errorf("List of the name = %v, want the live key", ids)
		}
		// The tombstone's id is never used again.
		reuse := newKey("other", "", base.Add(4*time.Minute))
		reuse.ID = k.ID
		if err := s.Create(ctx, reuse, entry("key.create", k.ID, base.Add(4*time.Minute))); !errors.Is(err, keystore.ErrExists) {
			t.Errorf("Create with a tombstone's id: %v, want ErrExists", err)
		}
		noAudit(t, s, 3)
	})

	t.Run("list pages by id, filtered by team, name and tombstones", func(t *testing.T) {
		s := open(t)
		var all, teamA, live []string
		for i := range 12 {
			team := []string{"team-a", "team-b", ""}[i%3]
			k := newKey(fmt.Sprintf("k%02d", i), team, base.Add(time.Duration(i)*time.Second))
			must(t, s.Create(ctx, k, entry("key.create", k.ID, k.Updated)))
			all = append(all, k.ID)
			if i%4 == 0 { // 0, 4, 8: tombstones, of teams a, b and none
				d := next(k, k.Updated.Add(time.Minute))
				d.Deleted = true
				must(t, s.Update(ctx, d, entry("key.delete", k.ID, d.Updated)))
			} else {
				live = append(live, k.ID)
			}
			if team == "team-a" && i%4 != 0 {
				teamA = append(teamA, k.ID)
			}
		}
		slices.Sort(all)
		slices.Sort(live)
		slices.Sort(teamA)
		for _, tt := range []struct {
			name string
			q    keystore.Query
			want []string
		}{
			{"live keys", keystore.Query{}, live},
			{"with tombstones", keystore.Query{Deleted: true}, all},
			{"of a team", keystore.Query{Team: "team-a"}, teamA},
			{"of no such team", keystore.Query{Team: "team-z"}, nil},
		} {
			for _, limit := range []int{1, 5, 0} {
				t.Run(fmt.Sprintf("%s, %d a page", tt.name, limit), func(t *testing.T) {
					q := tt.q
					q.Limit = limit
					var got []string
					for pages := 0; ; pages++ {
						if pages > len(all)+1 {
							t.Fatal("List never ends")
						}
						page, err := s.List(ctx, q)
						must(t, err)
						if len(page.Keys) > keystore.PageLimit(limit) {
							t.Fatalf("a page of %d keys, past the limit %d", len(page.Keys), keystore.PageLimit(limit))
						}
						got = append(got, idsOf(page.Keys)...)
						if page.Next == "" {
							break
						}
						q.After = page.Next
					}
					if !slices.Equal(got, tt.want) {
						t.Errorf("List = %v,\nwant %v", got, tt.want)
					}
				})
			}
		}
	})

	t.Run("a list page is at most MaxPage", func(t *testing.T) {
		s := open(t)
		ids := createMany(t, s, keystore.MaxPage+3, base, opt)
		page, err := s.List(ctx, keystore.Query{Limit: keystore.MaxPage * 5})
		must(t, err)
		if len(page.Keys) != keystore.MaxPage || page.Next == "" {
			t.Fatalf("List of %d keys with a limit of %d: %d keys, next %q; want %d and a next page", len(ids), keystore.MaxPage*5, len(page.Keys), page.Next, keystore.MaxPage)
		}
		rest, err := s.List(ctx, keystore.Query{Limit: keystore.MaxPage, After: page.Next})
		must(t, err)
		if got := append(idsOf(page.Keys), idsOf(rest.Keys)...); !slices.Equal(got, ids) || rest.Next != "" {
			t.Errorf("the two pages hold %d keys (next %q), want the %d in id order", len(got), rest.Next, len(ids))
		}
	})

	t.Run("changed returns what changed since, oldest first, tombstones included", func(t *testing.T) {
		s := open(t)
		a, b, c := newKey("a", "", base), newKey("b", "", base.Add(time.Hour)), newKey("c", "", base.Add(2*time.Hour))
		for _, k := range []*keystore.Key{a, b, c} {
			must(t, s.Create(ctx, k, entry("key.create", k.ID, k.Updated)))
		}
		da := next(a, base.Add(150*time.Minute))
		da.Deleted = true
		must(t, s.Update(ctx, da, entry("key.delete", a.ID, da.Updated)))
		for _, tt := range []struct {
			name  string
			since time.Time
			want  []string
		}{
			{"since the start", time.Time{}, []string{b.ID, c.ID, a.ID}},
			{"since a moment before the first", base.Add(-time.Second), []string{b.ID, c.ID, a.ID}},
			{"since exactly b's update (included)", b.Updated, []string{b.ID, c.ID, a.ID}},
			{"since just after b's", b.Updated.Add(time.Microsecond), []string{c.ID, a.ID}},
			{"since the deletion", da.Updated, []string{a.ID}},
			{"since now", time.Now(), nil},
		} {
			t.Run(tt.name, func(t *testing.T) {
				keys, more, err := s.Changed(ctx, tt.since)
				must(t, err)
				if got := idsOf(keys); !slices.Equal(got, tt.want) || more {
					t.Errorf("Changed = %v (more %v), want %v", got, more, tt.want)
				}
				for _, k := range keys {
					if k.ID == a.ID && (!k.Deleted || k.Version != 2) {
						t.Errorf("Changed gives a as %+v, want its tombstone", k)
					}
				}
			})
		}
	})

	t.Run("changed is bounded by MaxChanges", func(t *testing.T) {
		if opt.RewritesAll {
			t.Skip("the store rewrites itself on each change; its Changed is the memory store's, checked there")
		}
		s := open(t)
		ids := createMany(t, s, keystore.MaxChanges+5, base, opt)
		keys, more, err := s.Changed(ctx, base.Add(-time.Minute))
		must(t, err)
		if len(keys) != keystore.MaxChanges || !more {
			t.Fatalf("Changed over %d keys: %d keys, more %v; want %d and more", len(ids), len(keys), more, keystore.MaxChanges)
		}
		for i := 1; i < len(keys); i++ {
			if keys[i].Updated.Before(keys[i-1].Updated) {
				t.Fatalf("Changed is not oldest first at %d: %v after %v", i, keys[i].Updated, keys[i-1].Updated)
			}
		}
		// The gateway's next read starts at the last change it got; with it, every key comes.
		seen := map[string]bool{}
		for _, k := range keys {
			seen[k.ID] = true
		}
		rest, more, err := s.Changed(ctx, keys[len(keys)-1].Updated)
		must(t, err)
		for _, k := range rest {
			seen[k.ID] = true
		}
		if len(seen) != len(ids) || more {
			t.Errorf("two reads saw %d of %d keys (more %v)", len(seen), len(ids), more)
		}
	})

	t.Run("audit is newest first, paged, filtered by target and time", func(t *testing.T) {
		s := open(t)
		a, b := newKey("a", "", base), newKey("b", "", base)
		var want []*keystore.Entry // oldest first
		write := func(err error, e *keystore.Entry) {
			t.Helper()
			must(t, err)
			want = append(want, e)
		}
		e := entry("key.create", a.ID, base)
		write(s.Create(ctx, a, e), e)
		e = entry("key.create", b.ID, base.Add(time.Minute))
		write(s.Create(ctx, b, e), e)
		ka, kb := a, b
		for i := range 6 {
			at := base.Add(time.Duration(i+2) * time.Minute)
			k := &ka
			if i%2 == 1 {
				k = &kb
			}
			u := next(*k, at)
			u.Description = fmt.Sprint(i)
			e := entry("key.update", u.ID, at)
			e.Before, e.After = json.RawMessage(fmt.Sprintf(`{"description":%q}`, (*k).Description)), json.RawMessage(fmt.Sprintf(`{"description":"%d"}`, i))
			write(s.Update(ctx, u, e), e)
			*k = u
		}
		newest := func(keep func(*keystore.Entry) bool) []string {
			var ids []string
			for i := len(want) - 1; i >= 0; i-- {
				if keep(want[i]) {
					ids = append(ids, want[i].ID)
				}
			}
			return ids
		}
		since, until := base.Add(3*time.Minute), base.Add(6*time.Minute)
		for _, tt := range []struct {
			name string
			q    keystore.AuditQuery
			want []string
		}{
			{"everything", keystore.AuditQuery{}, newest(func(*keystore.Entry) bool { return true })},
			{"of one key", keystore.AuditQuery{Target: b.ID}, newest(func(e *keystore.Entry) bool { return e.Target == b.ID })},
			{"since (included)", keystore.AuditQuery{Since: since}, newest(func(e *keystore.Entry) bool { return !e.Time.Before(since) })},
			{"until (excluded)", keystore.AuditQuery{Until: until}, newest(func(e *keystore.Entry) bool { return e.Time.Before(until) })},
			{"of one key between", keystore.AuditQuery{Target: a.ID, Since: since, Until: until}, newest(func(e *keystore.Entry) bool {
				return e.Target == a.ID && !e.Time.Before(since) && e.Time.Before(until)
			})},
			{"of no such target", keystore.AuditQuery{Target: "key_none"}, nil},
		} {
			for _, limit := range []int{1, 3, 0} {
				t.Run(fmt.Sprintf("%s, %d a page", tt.name, limit), func(t *testing.T) {
					q := tt.q
					q.Limit = limit
					var got []*keystore.Entry
					for pages := 0; ; pages++ {
						if pages > len(want)+1 {
							t.Fatal("Audit never ends")
						}
						page, err := s.Audit(ctx, q)
						must(t, err)
						if len(page.Entries) > keystore.PageLimit(limit) {
							t.Fatalf("a page of %d entries, past the limit %d", len(page.Entries), keystore.PageLimit(limit))
						}
						got = append(got, page.Entries...)
						if page.Next == "" {
							break
						}
						q.After = page.Next
					}
					var ids []string
					for _, e := range got {
						ids = append(ids, e.ID)
					}
					if !slices.Equal(ids, tt.want) {
						t.Errorf("Audit = %v,\nwant %v", ids, tt.want)
					}
				})
			}
		}
		got := allAudit(t, s, keystore.AuditQuery{})
		for i, e := range got {
			sameEntry(t, e, want[len(want)-1-i])
		}
	})

	t.Run("of concurrent updates of one version exactly one wins", func(t *testing.T) {
		s := open(t)
		k := newKey("app", "", base)
		must(t, s.Create(ctx, k, entry("key.create", k.ID, base)))
		const writers = 8
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				u := next(k, base.Add(time.Minute))
				u.Description = fmt.Sprint("writer ", i)
				if i%2 == 1 { // half of them rotate, so the claims race too
					_, u.Hash = keystore.NewSecret()
				}
				errs[i] = s.Update(ctx, u, entry("key.update", k.ID, u.Updated))
			}()
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Fatalf("writers %d and %d both updated version 1", won, i)
			case err == nil:
				won = i
			case !errors.Is(err, keystore.ErrConflict):
				t.Errorf("writer %d: %v, want nil or ErrConflict", i, err)
			}
		}
		if won < 0 {
			t.Fatal("no writer won")
		}
		got, err := s.Get(ctx, k.ID)
		must(t, err)
		if got.Version != 2 || got.Description != fmt.Sprint("writer ", won) {
			t.Errorf("the key is v%d %q, want v2 by writer %d", got.Version, got.Description, won)
		}
		if h, err := s.ByHash(ctx, got.Hash); err != nil || h.ID != k.ID {
			t.Errorf("ByHash of the winner's secret: %v, %v", h, err)
		}
		if won%2 == 1 {
			if _, err := s.ByHash(ctx, k.Hash); !errors.Is(err, keystore.ErrNotFound) {
				t.Errorf("ByHash of the secret the winner rotated away: %v", err)
			}
		}
		noAudit(t, s, 2)
	})

	t.Run("of concurrent creates of one name exactly one wins", func(t *testing.T) {
		s := open(t)
		const writers = 8
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				k := newKey("app", "", base)
				errs[i] = s.Create(ctx, k, entry("key.create", k.ID, base))
			}()
		}
		wg.Wait()
		wins := 0
		for i, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, keystore.ErrNameTaken):
				t.Errorf("creator %d: %v, want nil or ErrNameTaken", i, err)
			}
		}
		page, err := s.List(ctx, keystore.Query{Deleted: true})
		must(t, err)
		if wins != 1 || len(page.Keys) != 1 {
			t.Errorf("%d creates won and %d keys are stored, want 1 and 1", wins, len(page.Keys))
		}
		noAudit(t, s, 1)
	})
}

func newKey(name, team string, at time.Time) *keystore.Key {
	_, h := keystore.NewSecret()
	return &keystore.Key{
		Key:  config.Key{ID: keystore.NewID(), Name: name, Hash: h, KeyLimits: config.KeyLimits{Rate: &config.Rate{RequestsPerMinute: 10}}},
		Team: team, Created: at, CreatedBy: "key:root", Updated: at, UpdatedBy: "key:root", Version: 1,
	}
}

// next returns k's next version, written at.
func next(k *keystore.Key, at time.Time) *keystore.Key {
	c := k.Clone()
	c.Version++
	c.Updated = at
	return c
}

func entry(action, target string, at time.Time) *keystore.Entry {
	return &keystore.Entry{ID: keystore.NewEntryID(), Time: at, Actor: "key:root", Role: keystore.RoleAdmin, Action: action, Target: target, Request: "req_" + keystore.NewID()}
}

// createMany creates n keys, a few at a time (a cloud store's writes take a while each), with
// distinct times a millisecond apart; it returns their ids in order.
func createMany(t *testing.T, s keystore.Store, n int, at time.Time, opt Options) []string {
	t.Helper()
	ids := make([]string, n)
	if opt.Fill != nil {
		keys := make([]*keystore.Key, n)
		for i := range keys {
			keys[i] = newKey(fmt.Sprintf("many-%05d", i), "", at.Add(time.Duration(i)*time.Millisecond))
			ids[i] = keys[i].ID
		}
		opt.Fill(t, s, keys)
		slices.Sort(ids)
		return ids
	}
	errs := make(chan error, n)
	work := make(chan int)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				k := newKey(fmt.Sprintf("many-%05d", i), "", at.Add(time.Duration(i)*time.Millisecond))
				ids[i] = k.ID
				if err := s.Create(context.Background(), k, entry("key.create", k.ID, k.Updated)); err != nil {
					errs <- fmt.Errorf("create %d: %w", i, err)
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

func allAudit(t *testing.T, s keystore.Store, q keystore.AuditQuery) []*keystore.Entry {
	t.Helper()
	var out []*keystore.Entry
	q.Limit = keystore.MaxPage
	for range 100 {
		page, err := s.Audit(context.Background(), q)
		must(t, err)
		out = append(out, page.Entries...)
		if page.Next == "" {
			return out
		}
		q.After = page.Next
	}
	t.Fatal("Audit never ends")
	return nil
}

// noAudit checks that the audit holds n entries: a refused change wrote none.
func noAudit(t *testing.T, s keystore.Store, n int) {
	t.Helper()
	if got := allAudit(t, s, keystore.AuditQuery{}); len(got) != n {
		t.Errorf("the audit holds %d entries, want %d (a refused change writes none)", len(got), n)
	}
}

func idsOf(keys []*keystore.Key) []string {
	var ids []string
	for _, k := range keys {
		ids = append(ids, k.ID)
	}
	return ids
}

func sorted(ids ...string) []string {
	slices.Sort(ids)
	return ids
}

func sameKey(t *testing.T, what string, got, want *keystore.Key) {
	t.Helper()
	g, err := keystore.EncodeKey(got)
	must(t, err)
	w, err := keystore.EncodeKey(want)
	must(t, err)
	if string(g) != string(w) {
		t.Errorf("%s =\n%s\nwant\n%s", what, g, w)
	}
	if got.Hash != want.Hash {
		t.Errorf("%s: the hash differs", what)
	}
}

func sameEntry(t *testing.T, got, want *keystore.Entry) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) || !got.Time.Equal(want.Time) {
		t.Errorf("audit entry =\n%s\nwant\n%s", g, w)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
