package routestate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/fngate/fngate/core/internal/atomicfile"
	"github.com/fngate/fngate/core/internal/filelock"
)

// DefaultFile is where the local server and the remediation command keep route state when
// no other store is configured.
const DefaultFile = ".fngate/routestate.json"

// File is a Store in one JSON file: the default for `make run`, shared by the local gateway
// (which reads it through a Cache) and `fngate-remediate` (which writes it).
//
// Every write takes an exclusive lock on PATH.lock, loads the file, applies one operation and
// replaces the file by writing a temporary file and renaming it over the old one, so readers
// (which take no lock) always see a whole file and writers in other processes are serialized.
type File struct {
	path string
	mu   sync.Mutex // serializes this process's writers before they contend for the file lock
}

// OpenFile returns a store on path, creating its directory. The file itself is created by the
// first write; a missing file reads as empty.
func OpenFile(path string) (*File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("routestate: %w", err)
	}
	return &File{path: path}, nil
}

// Path is the file's path.
func (f *File) Path() string { return f.path }

func (f *File) load() (tables, error) {
	var t tables
	b, err := os.ReadFile(f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return t, fmt.Errorf("routestate: %w", err)
	default:
		if err := json.Unmarshal(b, &t); err != nil {
			return t, fmt.Errorf("routestate: %s: %w", f.path, err)
		}
	}
	t.init()
	return t, nil
}

// update runs op on the loaded tables under both locks and saves them when op succeeds.
func (f *File) update(op func(*tables) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	unlock, err := filelock.Lock(f.path + ".lock")
	if err != nil {
		return fmt.Errorf("routestate: lock %s: %w", f.path, err)
	}
	defer unlock()
	t, err := f.load()
	if err != nil {
		return err
	}
	if err := op(&t); err != nil {
		return err
	}
	return f.save(&t)
}

func (f *File) save(t *tables) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return fmt.Errorf("routestate: %w", err)
	}
	if err := atomicfile.Write(f.path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("routestate: save %s: %w", f.path, err)
	}
	return nil
}

func (f *File) List(context.Context) ([]State, error) {
	t, err := f.load()
	if err != nil {
		return nil, err
	}
	return t.list(), nil
}

func (f *File) Get(_ context.Context, route string) (State, error) {
	t, err := f.load()
	if err != nil {
		return State{}, err
	}
	return t.get(route), nil
}

func (f *File) Put(_ context.Context, next State, snap *Snapshot) (State, error) {
	var out State
	err := f.update(func(t *tables) (err error) {
		out, err = t.put(next, snap)
		return err
	})
	return out, err
}

func (f *File) Claim(_ context.Context, c Claim) (bool, error) {
	var won bool
	err := f.update(func(t *tables) error {
		// Claims would grow the file without bound; the claimer's clock decides expiry, as
		// it does for the claim itself.
		t.pruneClaims(c.At)
		won = t.claim(c)
		return nil
	})
	return won, err
}

func (f *File) Release(_ context.Context, id string) error {
	return f.update(func(t *tables) error {
		delete(t.Claims, id)
		return nil
	})
}

func (f *File) Window(_ context.Context, route string) (Window, error) {
	t, err := f.load()
	if err != nil {
		return Window{}, err
	}
	return t.window(route), nil
}

func (f *File) PutWindow(_ context.Context, w Window) (Window, error) {
	var out Window
	err := f.update(func(t *tables) (err error) {
		out, err = t.putWindow(w)
		return err
	})
	return out, err
}

func (f *File) Snapshot(_ context.Context, id string) (Snapshot, error) {
	t, err := f.load()
	if err != nil {
		return Snapshot{}, err
	}
	return t.snapshot(id)
}

func (f *File) Snapshots(_ context.Context, limit int) ([]Snapshot, error) {
	t, err := f.load()
	if err != nil {
		return nil, err
	}
	return t.snapshots(limit), nil
}

func (f *File) Incident(_ context.Context, id string) (Incident, error) {
	t, err := f.load()
	if err != nil {
		return Incident{}, err
	}
	return t.incident(id), nil
}

func (f *File) PutIncident(_ context.Context, in Incident) (Incident, error) {
	var out Incident
	err := f.update(func(t *tables) (err error) {
		out, err = t.putIncident(in)
		return err
	})
	return out, err
}

func (f *File) Incidents(context.Context) ([]Incident, error) {
	t, err := f.load()
	if err != nil {
		return nil, err
	}
	return t.incidents(), nil
}

var _ Store = (*File)(nil)
