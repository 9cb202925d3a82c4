package routestate

import (
	"slices"
	"strings"
	"time"
)

// tables is a whole store as plain maps. The memory store keeps one under a mutex; the file
// store loads one, applies a single operation and saves it, under a file lock. Both get the
// same semantics from the same code.
type tables struct {
	Routes    map[string]State    `json:"routes,omitempty"`
	Windows   map[string]Window   `json:"windows,omitempty"`
	Claims    map[string]Claim    `json:"claims,omitempty"`
	Snapshots map[string]Snapshot `json:"snapshots,omitempty"`
	Incidents map[string]Incident `json:"incidents,omitempty"`
}

func (t *tables) init() {
	if t.Routes == nil {
		t.Routes = map[string]State{}
	}
	if t.Windows == nil {
		t.Windows = map[string]Window{}
	}
	if t.Claims == nil {
		t.Claims = map[string]Claim{}
	}
	if t.Snapshots == nil {
		t.Snapshots = map[string]Snapshot{}
	}
	if t.Incidents == nil {
		t.Incidents = map[string]Incident{}
	}
}

func (t *tables) get(route string) State {
	if s, ok := t.Routes[route]; ok {
		return s
	}
	return absent(route)
}

func (t *tables) list() []State {
	out := make([]State, 0, len(t.Routes))
	for _, s := range t.Routes {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b State) int { return strings.Compare(a.Route, b.Route) })
	return out
}

func (t *tables) put(next State, snap *Snapshot) (State, error) {
	if cur := t.get(next.Route); cur.Version != next.Version {
		return State{}, ErrConflict
	}
	if snap != nil {
		if _, dup := t.Snapshots[snap.ActionID]; dup {
			return State{}, ErrConflict
		}
	}
	next.Version++
	t.Routes[next.Route] = next
	if snap != nil {
		snap.After = next
		t.Snapshots[snap.ActionID] = *snap
	}
	return next, nil
}

func (t *tables) claim(c Claim) bool {
	if old, ok := t.Claims[c.ID]; ok && old.Expires.After(c.At) {
		return false
	}
	t.Claims[c.ID] = c
	return true
}

func (t *tables) window(route string) Window {
	w, ok := t.Windows[route]
	if !ok {
		return Window{Route: route}
	}
	w.Errors = slices.Clone(w.Errors)
	return w
}

func (t *tables) putWindow(w Window) (Window, error) {
	if cur := t.window(w.Route); cur.Version != w.Version {
		return Window{}, ErrConflict
	}
	w.Version++
	w.Errors = slices.Clone(w.Errors)
	t.Windows[w.Route] = w
	return t.window(w.Route), nil
}

func (t *tables) snapshot(id string) (Snapshot, error) {
	s, ok := t.Snapshots[id]
	if !ok {
		return Snapshot{}, ErrNotFound
	}
	return s, nil
}

// snapshots sorts by time, then id: action ids start with their time, so both orders agree.
func (t *tables) snapshots(limit int) []Snapshot {
	out := make([]Snapshot, 0, len(t.Snapshots))
	for _, s := range t.Snapshots {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Snapshot) int {
		if c := b.At.Compare(a.At); c != 0 {
			return c
		}
		return strings.Compare(b.ActionID, a.ActionID)
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// pruneClaims forgets claims expired at now.
func (t *tables) pruneClaims(now time.Time) {
	for id, c := range t.Claims {
		if !c.Expires.After(now) {
			delete(t.Claims, id)
		}
	}
}

func (t *tables) incident(id string) Incident {
	in, ok := t.Incidents[id]
	if !ok {
		return Incident{ID: id}
	}
	in.Services, in.Regions = slices.Clone(in.Services), slices.Clone(in.Regions)
	return in
}

func (t *tables) putIncident(in Incident) (Incident, error) {
	if cur := t.incident(in.ID); cur.Version != in.Version {
		return Incident{}, ErrConflict
	}
	in.Version++
	in.Services, in.Regions = slices.Clone(in.Services), slices.Clone(in.Regions)
	t.Incidents[in.ID] = in
	return t.incident(in.ID), nil
}

func (t *tables) incidents() []Incident {
	out := make([]Incident, 0, len(t.Incidents))
	for id := range t.Incidents {
		out = append(out, t.incident(id))
	}
	slices.SortFunc(out, func(a, b Incident) int { return strings.Compare(a.ID, b.ID) })
	return out
}
