// Package responsestore keeps the Responses door's stored responses (store: true), so that
// previous_response_id continues from one and GET / DELETE /v1/responses/{id} find it. A
// stored response belongs to the gateway key that made it: another key neither sees nor
// deletes it.
//
//	store.go            the Store interface, Stored, the errors, and the memory store (make run)
//	file.go             one file per response under a directory (make run across restarts)
//	dynamostore/        a DynamoDB table (the Lambda function)
//	firestorestore/     a Firestore collection (Cloud Functions)
//	internal/storetest  the conformance suite every store passes
//	internal/record     what the cloud stores share: the key, the compressed body, its parts
//
// Expiry is each store's own: a response is gone once its clock reaches Expires, though the
// cloud stores' TTL deletes it only later. The cloud stores compress a response's input and
// response, cut what does not fit one item (DynamoDB 400 KB, Firestore 1 MiB) into parts
// written before the item that names them, and refuse with ErrTooLarge a response of more
// than 8 MiB compressed. Each of their calls is bounded by its own timeout and fails with an
// error other than ErrNotFound when the store cannot be reached.
package responsestore

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"
)

// Errors a Store returns; any other error means the store could not answer (unreachable,
// timed out, refused), which is no evidence either way.
var (
	// ErrNotFound is a response that is not stored, has expired, or belongs to another key.
	ErrNotFound = errors.New("responsestore: no such response")
	// ErrTooLarge is a response the store cannot hold, even compressed. Nothing is written:
	// a response stored earlier under the same id and owner stays as it was.
	ErrTooLarge = errors.New("responsestore: response too large to store")
)

// Stored is one stored response.
type Stored struct {
	ID    string // resp_...
	Owner string // the gateway key's name ("" on an open gateway)
	Model string // the gateway model
	// Created and Expires bound its life; a store forgets it after Expires.
	Created time.Time
	Expires time.Time
	// Input is the conversation up to and including the request's own input, as Responses
	// input items (the continued history first), and Response the response object as the
	// client got it: together they are what previous_response_id continues from.
	Input    json.RawMessage
	Response json.RawMessage
}

// Store keeps stored responses. Implementations are safe for concurrent use and bound their
// own calls' time.
type Store interface {
	// Put stores s, replacing one with the same ID and owner.
	Put(ctx context.Context, s *Stored) error
	// Get returns the response id stored by owner, or ErrNotFound.
	Get(ctx context.Context, id, owner string) (*Stored, error)
	// Delete forgets the response id stored by owner; ErrNotFound when there is none.
	Delete(ctx context.Context, id, owner string) error
}

// Memory is a Store in the process's memory, for make run and tests. Now is its clock.
type Memory struct {
	Now func() time.Time

	mu sync.Mutex
	m  map[string]*Stored
}

// NewMemory returns an empty memory store.
func NewMemory() *Memory { return &Memory{Now: time.Now, m: map[string]*Stored{}} }

func (s *Memory) Put(_ context.Context, st *Stored) error {
	c := *st
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
	s.m[key(st.ID, st.Owner)] = &c
	return nil
}

func (s *Memory) Get(_ context.Context, id, owner string) (*Stored, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[key(id, owner)]
	if !ok || !s.Now().Before(st.Expires) {
		return nil, ErrNotFound
	}
	c := *st
	return &c, nil
}

func (s *Memory) Delete(_ context.Context, id, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(id, owner)
	st, ok := s.m[k]
	if !ok || !s.Now().Before(st.Expires) {
		return ErrNotFound
	}
	delete(s.m, k)
	return nil
}

// sweep drops expired responses, so a long-lived process does not keep them all.
func (s *Memory) sweep() {
	now := s.Now()
	for k, st := range s.m {
		if !now.Before(st.Expires) {
			delete(s.m, k)
		}
	}
}

// key scopes an id to its owner: a response id alone never finds another key's response.
func key(id, owner string) string { return owner + "\x00" + id }
