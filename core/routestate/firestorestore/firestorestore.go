// Package firestorestore keeps route state in Firestore (native mode), for the GCP functions.
//
// Five collections share a prefix (default "fngate_"): routes, windows, claims, actions and
// incidents.
// Document ids are the path-escaped route, delivery or action ids (a route id holds a "/",
// which Firestore reads as a path separator). Claims carry an `expires` timestamp for a TTL
// policy. Conditional writes are transactions that read the version first; a claim is a
// Create, which fails with AlreadyExists for everyone but the first caller.
package firestorestore

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fngate/fngate/core/routestate"
)

// DefaultPrefix starts the collection names.
const DefaultPrefix = "fngate_"

// Collection names after the prefix; the IaC names the claims collection in its TTL policy.
const (
	Routes    = "routes"
	Windows   = "windows"
	Claims    = "claims"
	Actions   = "actions"
	Incidents = "incidents"
	// TTLField is the claims field a TTL policy deletes on.
	TTLField = "expires"
)

// Store is a routestate.Store on Firestore.
type Store struct {
	c                                *firestore.Client
	routes, windows, claims, actions *firestore.CollectionRef
	incidents                        *firestore.CollectionRef
}

// New returns a store on the client's database; an empty prefix means DefaultPrefix.
func New(c *firestore.Client, prefix string) *Store {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return &Store{
		c:         c,
		routes:    c.Collection(prefix + Routes),
		windows:   c.Collection(prefix + Windows),
		claims:    c.Collection(prefix + Claims),
		actions:   c.Collection(prefix + Actions),
		incidents: c.Collection(prefix + Incidents),
	}
}

func doc(col *firestore.CollectionRef, id string) *firestore.DocumentRef {
	return col.Doc(url.PathEscape(id))
}

// errStale aborts a transaction whose precondition failed; it is not retried.
var errStale = errors.New("stale")

func notFound(err error) bool { return status.Code(err) == codes.NotFound }

// txError maps what a conditional transaction can end with. Aborted means the transaction
// kept colliding with other writers until its attempts ran out: a conflict, like a version
// mismatch.
func txError(what string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errStale), status.Code(err) == codes.Aborted, status.Code(err) == codes.AlreadyExists:
		return fmt.Errorf("%w: %s", routestate.ErrConflict, what)
	}
	return fmt.Errorf("firestorestore: %s: %w", what, err)
}

// version reads a document's version inside a transaction; 0 when it does not exist.
func version(tx *firestore.Transaction, ref *firestore.DocumentRef) (int64, error) {
	snap, err := tx.Get(ref)
	if notFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var v struct {
		Version int64 `firestore:"version"`
	}
	if err := snap.DataTo(&v); err != nil {
		return 0, err
	}
	return v.Version, nil
}

func (s *Store) List(ctx context.Context) ([]routestate.State, error) {
	docs, err := s.routes.Documents(ctx).GetAll()
	if err != nil {
		return nil, fmt.Errorf("firestorestore: list routes: %w", err)
	}
	out := make([]routestate.State, 0, len(docs))
	for _, d := range docs {
		var st routestate.State
		if err := d.DataTo(&st); err != nil {
			return nil, fmt.Errorf("firestorestore: %s: %w", d.Ref.ID, err)
		}
		out = append(out, st)
	}
	return out, nil
}

func (s *Store) Get(ctx context.Context, route string) (routestate.State, error) {
	d, err := doc(s.routes, route).Get(ctx)
	if notFound(err) {
		return routestate.State{Route: route, Status: routestate.Active}, nil
	}
	if err != nil {
		return routestate.State{}, fmt.Errorf("firestorestore: get %s: %w", route, err)
	}
	var st routestate.State
	if err := d.DataTo(&st); err != nil {
		return routestate.State{}, fmt.Errorf("firestorestore: %s: %w", route, err)
	}
	return st, nil
}

func (s *Store) Put(ctx context.Context, next routestate.State, snap *routestate.Snapshot) (routestate.State, error) {
	stored := next
	stored.Version++
	ref := doc(s.routes, next.Route)
	err := s.c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		v, err := version(tx, ref)
		if err != nil {
			return err
		}
		if v != next.Version {
			return errStale
		}
		if snap != nil {
			withAfter := *snap
			withAfter.After = stored
			// Create fails the commit when the id exists, so the route is not changed either.
			if err := tx.Create(doc(s.actions, snap.ActionID), withAfter); err != nil {
				return err
			}
		}
		return tx.Set(ref, stored)
	})
	if err != nil {
		return routestate.State{}, txError("put "+next.Route, err)
	}
	if snap != nil {
		snap.After = stored
	}
	return stored, nil
}

func (s *Store) Claim(ctx context.Context, c routestate.Claim) (bool, error) {
	ref := doc(s.claims, c.ID)
	_, err := ref.Create(ctx, c)
	if err == nil {
		return true, nil
	}
	if status.Code(err) != codes.AlreadyExists {
		return false, fmt.Errorf("firestorestore: claim %s: %w", c.ID, err)
	}
	// The TTL policy deletes lazily; an expired claim still present is taken over, once.
	err = s.c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		d, err := tx.Get(ref)
		if err != nil && !notFound(err) {
			return err
		}
		if err == nil {
			var old routestate.Claim
			if err := d.DataTo(&old); err != nil {
				return err
			}
			if old.Expires.After(c.At) {
				return errStale
			}
		}
		return tx.Set(ref, c)
	})
	if err == nil {
		return true, nil
	}
	if err := txError("claim "+c.ID, err); !errors.Is(err, routestate.ErrConflict) {
		return false, err
	}
	return false, nil
}

func (s *Store) Release(ctx context.Context, id string) error {
	if _, err := doc(s.claims, id).Delete(ctx); err != nil {
		return fmt.Errorf("firestorestore: release %s: %w", id, err)
	}
	return nil
}

func (s *Store) Window(ctx context.Context, route string) (routestate.Window, error) {
	d, err := doc(s.windows, route).Get(ctx)
	if notFound(err) {
		return routestate.Window{Route: route}, nil
	}
	if err != nil {
		return routestate.Window{}, fmt.Errorf("firestorestore: window %s: %w", route, err)
	}
	var w routestate.Window
	if err := d.DataTo(&w); err != nil {
		return routestate.Window{}, fmt.Errorf("firestorestore: window %s: %w", route, err)
	}
	return w, nil
}

func (s *Store) PutWindow(ctx context.Context, w routestate.Window) (routestate.Window, error) {
	stored := w
	stored.Version++
	ref := doc(s.windows, w.Route)
	err := s.c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		v, err := version(tx, ref)
		if err != nil {
			return err
		}
		if v != w.Version {
			return errStale
		}
		return tx.Set(ref, stored)
	})
	if err != nil {
		return routestate.Window{}, txError("window "+w.Route, err)
	}
	return stored, nil
}

func (s *Store) Snapshot(ctx context.Context, id string) (routestate.Snapshot, error) {
	d, err := doc(s.actions, id).Get(ctx)
	if notFound(err) {
		return routestate.Snapshot{}, routestate.ErrNotFound
	}
	if err != nil {
		return routestate.Snapshot{}, fmt.Errorf("firestorestore: action %s: %w", id, err)
	}
	var snap routestate.Snapshot
	if err := d.DataTo(&snap); err != nil {
		return routestate.Snapshot{}, fmt.Errorf("firestorestore: action %s: %w", id, err)
	}
	return snap, nil
}

func (s *Store) Snapshots(ctx context.Context, limit int) ([]routestate.Snapshot, error) {
	q := s.actions.OrderBy("at", firestore.Desc)
	if limit > 0 {
		q = q.Limit(limit)
	}
	docs, err := q.Documents(ctx).GetAll()
	if err != nil {
		return nil, fmt.Errorf("firestorestore: list actions: %w", err)
	}
	out := make([]routestate.Snapshot, 0, len(docs))
	for _, d := range docs {
		var snap routestate.Snapshot
		if err := d.DataTo(&snap); err != nil {
			return nil, fmt.Errorf("firestorestore: action %s: %w", d.Ref.ID, err)
		}
		out = append(out, snap)
	}
	return out, nil
}

func (s *Store) Incident(ctx context.Context, id string) (routestate.Incident, error) {
	d, err := doc(s.incidents, id).Get(ctx)
	if notFound(err) {
		return routestate.Incident{ID: id}, nil
	}
	if err != nil {
		return routestate.Incident{}, fmt.Errorf("firestorestore: incident %s: %w", id, err)
	}
	var in routestate.Incident
	if err := d.DataTo(&in); err != nil {
		return routestate.Incident{}, fmt.Errorf("firestorestore: incident %s: %w", id, err)
	}
	return in, nil
}

func (s *Store) PutIncident(ctx context.Context, in routestate.Incident) (routestate.Incident, error) {
	stored := in
	stored.Version++
	ref := doc(s.incidents, in.ID)
	err := s.c.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		v, err := version(tx, ref)
		if err != nil {
			return err
		}
		if v != in.Version {
			return errStale
		}
		return tx.Set(ref, stored)
	})
	if err != nil {
		return routestate.Incident{}, txError("incident "+in.ID, err)
	}
	return stored, nil
}

func (s *Store) Incidents(ctx context.Context) ([]routestate.Incident, error) {
	docs, err := s.incidents.OrderBy("id", firestore.Asc).Documents(ctx).GetAll()
	if err != nil {
		return nil, fmt.Errorf("firestorestore: list incidents: %w", err)
	}
	out := make([]routestate.Incident, 0, len(docs))
	for _, d := range docs {
		var in routestate.Incident
		if err := d.DataTo(&in); err != nil {
			return nil, fmt.Errorf("firestorestore: incident %s: %w", d.Ref.ID, err)
		}
		out = append(out, in)
	}
	return out, nil
}

var _ routestate.Store = (*Store)(nil)
