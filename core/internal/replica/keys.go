package replica

import (
	"context"

	"github.com/fngate/fngate/core/keystore"
)

// Keys is one key store table in a replica per region: each change made in one region is
// made in the others after the link's delay, with its own timestamps (as a replicated item
// keeps its writer's updated time), which is what a key cache's "changed since" read meets.
type Keys struct {
	link     *Link
	replicas []*KeyReplica
}

// NewKeys returns a table of n replicas joined by link.
func NewKeys(link *Link, n int) *Keys {
	t := &Keys{link: link}
	for range n {
		t.replicas = append(t.replicas, &KeyReplica{Memory: keystore.NewMemory(), t: t})
	}
	return t
}

// Replica returns region i's replica.
func (t *Keys) Replica(i int) *KeyReplica { return t.replicas[i] }

// KeyReplica is one region's replica; reads are its own, writes reach the others later.
type KeyReplica struct {
	*keystore.Memory
	t *Keys
}

func (r *KeyReplica) Create(ctx context.Context, k *keystore.Key, e *keystore.Entry) error {
	sent := k.Clone()
	if err := r.Memory.Create(ctx, k, e); err != nil {
		return err
	}
	r.replicate(func(o *KeyReplica) { _ = o.Memory.Create(context.Background(), sent, e) })
	return nil
}

func (r *KeyReplica) Update(ctx context.Context, k *keystore.Key, e *keystore.Entry) error {
	sent := k.Clone()
	if err := r.Memory.Update(ctx, k, e); err != nil {
		return err
	}
	r.replicate(func(o *KeyReplica) { _ = o.Memory.Update(context.Background(), sent, e) })
	return nil
}

// replicate applies write to the other replicas later (it writes a copy of the key taken
// before the local write, which the caller may change once this returns).
func (r *KeyReplica) replicate(write func(o *KeyReplica)) {
	for _, o := range r.t.replicas {
		if o != r {
			r.t.link.after(func() { write(o) })
		}
	}
}

// Settled reports whether every replica holds key id at version (for tests).
func (t *Keys) Settled(id string, version int64) bool {
	for _, r := range t.replicas {
		k, err := r.Get(context.Background(), id)
		if err != nil || k.Version != version {
			return false
		}
	}
	return true
}

var _ keystore.Store = (*KeyReplica)(nil)
