package routestate

import (
	"context"
	"errors"
	"time"
)

// Errors a Store returns.
var (
	// ErrConflict means another writer changed the record first (a version mismatch, or a
	// snapshot id that already exists). The caller re-reads and decides again.
	ErrConflict = errors.New("routestate: conflicting write")
	// ErrNotFound means no snapshot has that action id.
	ErrNotFound = errors.New("routestate: not found")
)

// Store is the durable side of route state, shared by every gateway instance and remediation
// handler. Every write is conditional, so concurrent handlers never lose each other's updates
// and an event is acted on at most once.
type Store interface {
	Lister
	// Get returns the route's record, or State{Route: route, Status: Active} with Version 0
	// when the store has none.
	Get(ctx context.Context, route string) (State, error)
	// Put replaces the route's record if its stored version still equals next.Version (0: no
	// record yet) and returns what was stored, with Version incremented. A non-nil snap is
	// created in the same atomic write, with After set to the stored record: the route never
	// changes without its snapshot, and a snapshot id that already exists fails the whole
	// write with ErrConflict.
	Put(ctx context.Context, next State, snap *Snapshot) (State, error)
	// Claim records a delivery id; it reports false when the id is already claimed and the
	// claim has not expired at c.At. Exactly one of any number of concurrent callers wins.
	Claim(ctx context.Context, c Claim) (bool, error)
	// Release drops a claim so a redelivery is processed again (after a failed attempt).
	Release(ctx context.Context, id string) error
	// Window returns the route's recent transient errors (empty with Version 0 when none).
	Window(ctx context.Context, route string) (Window, error)
	// PutWindow replaces the window if its stored version still equals w.Version.
	PutWindow(ctx context.Context, w Window) (Window, error)
	// Snapshot returns the snapshot of one applied action, or ErrNotFound.
	Snapshot(ctx context.Context, actionID string) (Snapshot, error)
	// Snapshots returns up to limit snapshots, newest first.
	Snapshots(ctx context.Context, limit int) ([]Snapshot, error)
	// Incident returns the provider incident with that id, or Incident{ID: id} with Version 0
	// when the store has none.
	Incident(ctx context.Context, id string) (Incident, error)
	// PutIncident replaces the incident if its stored version still equals in.Version and
	// returns what was stored, with Version incremented.
	PutIncident(ctx context.Context, in Incident) (Incident, error)
	// Incidents returns every incident recorded, sorted by id.
	Incidents(ctx context.Context) ([]Incident, error)
}

// Lister is what the gateway's cache needs from a store.
type Lister interface {
	// List returns every route that has a record.
	List(ctx context.Context) ([]State, error)
}

// Claim is a delivery id taken by one handler.
type Claim struct {
	ID string `json:"id" firestore:"id"`
	// At is the claimer's clock; a claim that expired before it can be taken over.
	At time.Time `json:"at" firestore:"at"`
	// Expires bounds how long the id is remembered (stores with TTL delete it after).
	Expires time.Time `json:"expires" firestore:"expires"`
}

// Window is a route's recent transient errors, kept in the store so a burst is counted across
// handler invocations and instances.
type Window struct {
	Route string `json:"route" dynamodbav:"route" firestore:"route"`
	// Errors are the times of the counted errors, oldest first.
	Errors  []time.Time `json:"errors,omitempty" dynamodbav:"errors,omitempty" firestore:"errors"`
	Version int64       `json:"version" dynamodbav:"version" firestore:"version"`
}

// Snapshot is one applied action: the route's record before and after, so it can be undone.
type Snapshot struct {
	ActionID string    `json:"action_id" dynamodbav:"action_id" firestore:"action_id"`
	Route    string    `json:"route" dynamodbav:"route" firestore:"route"`
	Action   string    `json:"action" dynamodbav:"action" firestore:"action"`
	EventID  string    `json:"event_id,omitempty" dynamodbav:"event_id,omitempty" firestore:"event_id,omitempty"`
	Why      string    `json:"why,omitempty" dynamodbav:"why,omitempty" firestore:"why,omitempty"`
	At       time.Time `json:"at" dynamodbav:"at" firestore:"at"`
	Before   State     `json:"before" dynamodbav:"before" firestore:"before"`
	After    State     `json:"after" dynamodbav:"after" firestore:"after"`
}

// absent is what Get returns for a route without a record.
func absent(route string) State { return State{Route: route, Status: Active} }
