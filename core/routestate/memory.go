package routestate

import (
	"context"
	"sync"
)

// Memory is a Store in process memory: for tests and for a single process that both serves
// and remediates.
type Memory struct {
	mu sync.Mutex
	t  tables
}

// NewMemory returns an empty store.
func NewMemory() *Memory {
	m := &Memory{}
	m.t.init()
	return m
}

func (m *Memory) List(context.Context) ([]State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t.list(), nil
}

func (m *Memory) Get(_ context.Context, route string) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t.get(route), nil
}

func (m *Memory) Put(_ context.Context, next State, snap *Snapshot) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t.put(next, snap)
}

func (m *Memory) Claim(_ context.Context, c Claim) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t.claim(c), nil
}

func (m *Memory) Release(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.t.Claims, id)
	return nil
}

func (m *Memory) Window(_ context.Context, route string) (Window, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t.window(route), nil
}

func (m *Memory) PutWindow(_ context.Context, w Window) (Window, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t.putWindow(w)
}

func (m *Memory) Snapshot(_ context.Context, id string) (Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t.snapshot(id)
}

func (m *Memory) Snapshots(_ context.Context, limit int) ([]Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t.snapshots(limit), nil
}

func (m *Memory) Incident(_ context.Context, id string) (Incident, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t.incident(id), nil
}

func (m *Memory) PutIncident(_ context.Context, in Incident) (Incident, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t.putIncident(in)
}

func (m *Memory) Incidents(context.Context) ([]Incident, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t.incidents(), nil
}

var _ Store = (*Memory)(nil)
