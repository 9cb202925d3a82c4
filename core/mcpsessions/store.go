// Package mcpsessions keeps the MCP sessions of the protocol versions whose initialize opens
// one (before 2026-07-28: Claude Code and Codex send these), so that any instance of the
// gateway continues a session another one opened: the gateway's /mcp is served stateless, and
// what a session must remember between messages (the client's initialize parameters, its
// logging level, whose it is) lives here.
//
//	store.go            the Store interface, Session, ErrNotFound, and the memory store (make run)
//	dynamostore/        a DynamoDB table (the Lambda function)
//	firestorestore/     a Firestore collection (Cloud Functions)
//	internal/storetest  the conformance suite every store passes
//
// Expiry is each store's own: a session is gone once the store's clock reaches Expires, though
// the cloud stores' TTL deletes it only later.
package mcpsessions

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrNotFound is a session that was never opened, has expired or was deleted. Any other error
// means the store could not answer.
var ErrNotFound = errors.New("mcpsessions: no such session")

// Session is one open MCP session.
type Session struct {
	ID string // the Mcp-Session-Id the gateway gave the client
	// Owner is the caller that opened it (a gateway key's id, or oauth:<subject>): a session
	// is continued only by its owner.
	Owner string
	// State is the gateway's record of the session (JSON, opaque to the store).
	State []byte
	// Expires is when the session is forgotten unless Put again with a later time.
	Expires time.Time
}

// Store keeps sessions. Implementations are safe for concurrent use and bound their own calls'
// time.
type Store interface {
	// Put stores s, replacing a session with the same ID.
	Put(ctx context.Context, s Session) error
	// Get returns session id, or ErrNotFound.
	Get(ctx context.Context, id string) (Session, error)
	// Delete forgets session id; deleting one that is not there is not an error.
	Delete(ctx context.Context, id string) error
}

// MaxMemorySessions bounds the memory store; past it, the session expiring soonest goes.
const MaxMemorySessions = 10000

// Memory is a Store in the process's memory, for make run and tests. Now is its clock.
type Memory struct {
	Now func() time.Time

	mu    sync.Mutex
	m     map[string]Session
	limit int // MaxMemorySessions; tests lower it
}

// NewMemory returns an empty memory store.
func NewMemory() *Memory {
	return &Memory{Now: time.Now, m: map[string]Session{}, limit: MaxMemorySessions}
}

func (s *Memory) Put(_ context.Context, sess Session) error {
	sess.State = append([]byte(nil), sess.State...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, replacing := s.m[sess.ID]; !replacing && len(s.m) >= s.limit {
		s.evict()
	}
	s.m[sess.ID] = sess
	return nil
}

// evict drops expired sessions, and when none had expired, the one expiring soonest.
func (s *Memory) evict() {
	now := s.Now()
	soonest := ""
	for id, sess := range s.m {
		switch {
		case !now.Before(sess.Expires):
			delete(s.m, id)
		case soonest == "" || sess.Expires.Before(s.m[soonest].Expires):
			soonest = id
		}
	}
	if len(s.m) >= s.limit {
		delete(s.m, soonest)
	}
}

func (s *Memory) Get(_ context.Context, id string) (Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.m[id]
	if !ok {
		return Session{}, ErrNotFound
	}
	if !s.Now().Before(sess.Expires) {
		delete(s.m, id)
		return Session{}, ErrNotFound
	}
	sess.State = append([]byte(nil), sess.State...)
	return sess, nil
}

func (s *Memory) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
	return nil
}
