// Package keystore keeps the gateway keys issued at runtime (the admin API's POST
// /admin/v1/keys) in the store every instance shares, beside the keys in config, which stay
// for bootstrap and break-glass. A stored key has an immutable id, which the counters, the
// stored responses, the usage history and the logs follow, so a key deleted and made again
// under its old name inherits nothing; only the SHA-256 of its secret is kept, and the secret
// is shown once, when it is made. Every change is written with its audit entry, at once.
//
//	key.go      Key: what a config key has, and who owns it, its role, its life
//	secret.go   NewSecret, NewID: the secret (sk-fngate-...) and the id (key_...)
//	store.go    the Store interface, its queries and errors
//	audit.go    Entry: one admin change, who, what, before and after
//	memory.go   the memory store (make run, tests)
//	file.go     one JSON file under a lock (make run across restarts, several local servers)
//	dynamostore/, firestorestore/  the cloud stores (Lambda, Cloud Functions)
//	internal/storetest  the conformance suite every store passes
package keystore

import (
	"time"

	"github.com/fngate/fngate/core/config"
)

// Roles a key (or an admin principal) may carry.
const (
	// RoleAdmin may do everything in the admin API.
	RoleAdmin = "admin"
	// RoleViewer may read everything in the admin API and change nothing.
	RoleViewer = "viewer"
	// RoleTeamAdmin manages the keys of its own team, granting no model, budget or limit
	// beyond its own, and cannot make another team-admin.
	RoleTeamAdmin = "team-admin"
)

// IDPrefix begins every stored key's id; a config key's id is its name, which may not begin
// with it.
const IDPrefix = config.StoredKeyIDPrefix

// Key is one stored key. Key.Key holds what a config key has (name, models, residency,
// request profile, rate, budget, per_model, the secret's hash; its ID is the stored id), so
// the gateway serves a stored key exactly as it serves one from config.
type Key struct {
	config.Key

	Team        string
	Owner       string // who the key is for (a person, a service)
	Description string
	Role        string // "", or RoleAdmin, RoleViewer, RoleTeamAdmin

	Created   time.Time
	CreatedBy string // the admin principal
	Updated   time.Time
	UpdatedBy string
	// ExpiresAt, when set, is when the key stops working.
	ExpiresAt *time.Time
	Disabled  bool
	// Deleted marks a tombstone: a revoked key, kept for the audit and so that its id is
	// never used again. Its name is free for a new key, its secret works nowhere.
	Deleted bool
	// Version counts the key's writes (1 when made): an update names the version it read,
	// so of two admins editing one key the second gets ErrConflict instead of undoing the
	// first.
	Version int64
}

// Usable reports whether the key's secret may be served at now: not deleted, not disabled,
// not expired.
func (k *Key) Usable(now time.Time) bool {
	return !k.Deleted && !k.Disabled && (k.ExpiresAt == nil || now.Before(*k.ExpiresAt))
}

// Clone returns a deep copy of k, so a store or a cache never shares a key's slices and maps
// with its caller.
func (k *Key) Clone() *Key {
	c := *k
	c.Models = append([]string(nil), k.Models...)
	c.RequestProfileIgnore = append([]string(nil), k.RequestProfileIgnore...)
	if k.Rate != nil {
		r := *k.Rate
		c.Rate = &r
	}
	if k.Budget != nil {
		b := *k.Budget
		c.Budget = &b
	}
	if k.PerModel != nil {
		c.PerModel = make(map[string]*config.ModelLimits, len(k.PerModel))
		for g, m := range k.PerModel {
			if m == nil {
				c.PerModel[g] = nil
				continue
			}
			mm := *m
			if m.Rate != nil {
				r := *m.Rate
				mm.Rate = &r
			}
			if m.Budget != nil {
				b := *m.Budget
				mm.Budget = &b
			}
			c.PerModel[g] = &mm
		}
	}
	if k.ExpiresAt != nil {
		t := *k.ExpiresAt
		c.ExpiresAt = &t
	}
	return &c
}
