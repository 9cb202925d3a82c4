package counters

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fngate/fngate/core/internal/atomicfile"
	"github.com/fngate/fngate/core/internal/filelock"
)

// File is a Store in one JSON file, shared by the processes of one machine (several `make run`
// servers). Every operation takes an exclusive lock on PATH.lock, loads the file, applies
// itself and, when it changed something, replaces the file by renaming a temporary one over
// it, so readers always see a whole file. It is for development: each operation rewrites the
// whole file.
type File struct {
	path string
	mu   sync.Mutex // serializes this process's operations before they contend for the lock
}

// OpenFile returns a store on path, creating its directory; a missing file reads as empty.
func OpenFile(path string) (*File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("counters: %w", err)
	}
	return &File{path: path}, nil
}

type fileData struct {
	Keys map[string]*item `json:"keys"`
	// History is the usage history: key -> UTC day -> model -> usage.
	History map[string]map[string]map[string]Usage `json:"history,omitempty"`
}

func (f *File) load() (*fileData, error) {
	d := &fileData{}
	b, err := os.ReadFile(f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("counters: %w", err)
	default:
		if err := json.Unmarshal(b, d); err != nil {
			return nil, fmt.Errorf("counters: %s: %w (%w)", f.path, ErrCorrupt, err)
		}
	}
	if d.Keys == nil {
		d.Keys = map[string]*item{}
	}
	return d, nil
}

// modify runs op on the file's data under both locks and saves the file when op says so.
func (f *File) modify(op func(*fileData) bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	unlock, err := filelock.Lock(f.path + ".lock")
	if err != nil {
		return fmt.Errorf("counters: lock %s: %w", f.path, err)
	}
	defer unlock()
	d, err := f.load()
	if err != nil {
		return err
	}
	if !op(d) {
		return nil
	}
	return f.save(d)
}

// update runs op on the key's item and saves the file when op says so.
func (f *File) update(key string, w Windows, op func(*item) bool) error {
	return f.modify(func(d *fileData) bool { return f.updateItem(d, key, w, op) })
}

func (f *File) updateItem(d *fileData, key string, w Windows, op func(*item) bool) bool {
	it := d.Keys[key]
	if it == nil {
		it = &item{}
		d.Keys[key] = it
	}
	if !op(it) {
		return false
	}
	// Keys idle past their last window are forgotten, as TTL forgets them in the cloud stores.
	for k, other := range d.Keys {
		if k != key && other.Windows.Month < w.Month {
			delete(d.Keys, k)
		}
	}
	return true
}

func (f *File) save(d *fileData) error {
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("counters: %w", err)
	}
	if err := atomicfile.Write(f.path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("counters: save %s: %w", f.path, err)
	}
	return nil
}

func (f *File) Take(_ context.Context, key string, w Windows, amounts []Amount) (Counts, bool, error) {
	var c Counts
	var ok bool
	err := f.update(key, w, func(it *item) bool {
		c, ok = it.take(w, amounts)
		return ok
	})
	return c, ok && err == nil, err
}

func (f *File) Add(_ context.Context, key string, w Windows, amounts []Amount) error {
	return f.update(key, w, func(it *item) bool {
		it.add(w, amounts)
		return true
	})
}

func (f *File) Read(_ context.Context, key string, w Windows) (Counts, error) {
	d, err := f.load()
	if err != nil {
		return Counts{}, err
	}
	it := d.Keys[key]
	if it == nil {
		it = &item{}
	}
	return it.read(w), nil
}

// AddUsage adds u to the key's day in the same file, and forgets days older than
// HistoryDays before at, as TTL forgets them in the cloud stores.
func (f *File) AddUsage(_ context.Context, key string, at time.Time, model string, u Usage) error {
	return f.modify(func(d *fileData) bool {
		if d.History == nil {
			d.History = map[string]map[string]map[string]Usage{}
		}
		byDay := d.History[key]
		if byDay == nil {
			byDay = map[string]map[string]Usage{}
			d.History[key] = byDay
		}
		day := Day(at)
		if byDay[day] == nil {
			byDay[day] = map[string]Usage{}
		}
		v := byDay[day][model]
		v.Add(u)
		byDay[day][model] = v
		oldest := Day(at.AddDate(0, 0, -HistoryDays))
		for _, days := range d.History {
			for dd := range days {
				if dd < oldest {
					delete(days, dd)
				}
			}
		}
		return true
	})
}

func (f *File) Usage(_ context.Context, key string, from, to time.Time) ([]DayUsage, error) {
	d, err := f.load()
	if err != nil {
		return nil, err
	}
	return rows(d.History[key], from, to), nil
}

var (
	_ Store   = (*File)(nil)
	_ History = (*File)(nil)
)
