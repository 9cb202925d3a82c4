package keystore

import (
	"encoding/json"
	"time"
)

// Entry is one admin change, written with the change itself and never altered after: who
// made it, what it did, to what, and the state before and after (keys without their
// secret's hash: the hash is not the secret, but nothing needs it in an audit).
type Entry struct {
	ID      string // aud_..., unique
	Time    time.Time
	Actor   string // the admin principal: key:<id or name>, or oidc:<issuer>#<subject> (<email>)
	Role    string // the actor's role at the time
	Action  string // key.create, key.update, key.disable, key.enable, key.rotate, key.delete, route.cool, route.restore
	Target  string // the key id, or the route id
	Before  json.RawMessage
	After   json.RawMessage
	Request string // the admin request's id
}

// AuditQuery pages the audit log, newest first.
type AuditQuery struct {
	// Target, when set, keeps the entries about one key or route.
	Target string
	// Since and Until bound the entries' time (zero: unbounded).
	Since, Until time.Time
	// After is the cursor a previous page returned; "" starts at the newest.
	After string
	// Limit is the page's size, at most MaxPage (0: DefaultPage).
	Limit int
}

// AuditPage is one page of the audit log.
type AuditPage struct {
	Entries []*Entry
	// Next is the cursor of the next page, "" when this is the last.
	Next string
}
