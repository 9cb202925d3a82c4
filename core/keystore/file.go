package keystore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fngate/fngate/core/internal/atomicfile"
	"github.com/fngate/fngate/core/internal/filelock"
)

// MaxFileSize bounds the file store's file: past it the store refuses to read it rather than
// hold an unbounded file in memory (at about 1 KB a key and its entries, some tens of
// thousands of keys; the cloud stores are for more).
const MaxFileSize = 64 << 20

// File is a Store in one JSON file, shared by the processes of one machine (several local
// servers) and kept across their restarts. A change takes an exclusive lock on PATH.lock,
// reads the file, applies itself as the memory store does and replaces the file by renaming
// a temporary one over it, so a reader, which takes no lock, sees the file before the change
// or after it, never a part. Reads parse the file again only when it was replaced. It is for
// development: each change rewrites the whole file.
type File struct {
	path string

	mu   sync.Mutex // serializes this process's changes before they contend for the lock
	seen struct {
		sync.Mutex
		info fs.FileInfo // the file the cached parse is of
		mem  *Memory
	}
}

// OpenFile returns a store on path, creating its directory; a missing file is an empty store.
func OpenFile(path string) (*File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("keystore: %w", err)
	}
	return &File{path: path}, nil
}

type fileData struct {
	Keys  []json.RawMessage `json:"keys"`  // EncodeKey's, tombstones included
	Audit []*Entry          `json:"audit"` // oldest first
}

// read returns the store the file holds now; cached says a parse of an unreplaced file may
// serve (reads), where a change always reads the file afresh under the lock.
func (f *File) read(cached bool) (*Memory, error) {
	fh, err := os.Open(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewMemory(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("keystore: %w", err)
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("keystore: %w", err)
	}
	if cached {
		f.seen.Lock()
		prev, mem := f.seen.info, f.seen.mem
		f.seen.Unlock()
		if prev != nil && os.SameFile(prev, info) && prev.Size() == info.Size() && prev.ModTime().Equal(info.ModTime()) {
			return mem, nil
		}
	}
	if info.Size() > MaxFileSize {
		return nil, fmt.Errorf("keystore: %s is %d bytes, past the file store's bound of %d", f.path, info.Size(), MaxFileSize)
	}
	b, err := io.ReadAll(io.LimitReader(fh, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("keystore: %w", err)
	}
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("keystore: %s grew past the file store's bound of %d bytes", f.path, MaxFileSize)
	}
	mem, err := parseFile(b)
	if err != nil {
		return nil, fmt.Errorf("keystore: %s: %w", f.path, err)
	}
	f.remember(info, mem)
	return mem, nil
}

func (f *File) remember(info fs.FileInfo, mem *Memory) {
	f.seen.Lock()
	f.seen.info, f.seen.mem = info, mem
	f.seen.Unlock()
}

func parseFile(b []byte) (*Memory, error) {
	var d fileData
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("not a key store's file: %w", err)
	}
	m := NewMemory()
	for _, raw := range d.Keys {
		k, err := DecodeKey(raw)
		if err != nil {
			return nil, err
		}
		if _, dup := m.keys[k.ID]; dup {
			return nil, fmt.Errorf("key %s is in the file twice", k.ID)
		}
		m.keys[k.ID] = k
		if !k.Deleted {
			m.hashes[k.Hash], m.names[k.Name] = k.ID, k.ID
		}
	}
	for _, e := range d.Audit {
		if e == nil {
			return nil, errors.New("an audit entry is null")
		}
		m.audit = append(m.audit, e)
	}
	return m, nil
}

// change applies op to the file's store under both locks and saves it when op succeeds.
func (f *File) change(op func(*Memory) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	unlock, err := filelock.Lock(f.path + ".lock")
	if err != nil {
		return fmt.Errorf("keystore: lock %s: %w", f.path, err)
	}
	defer unlock()
	m, err := f.read(false)
	if err != nil {
		return err
	}
	// op works on a copy: a refused change must leave the cached parse as the file has it.
	m = m.copy()
	if err := op(m); err != nil {
		return err
	}
	d := fileData{Keys: make([]json.RawMessage, 0, len(m.keys)), Audit: m.audit}
	for _, k := range m.sortedKeys() {
		b, err := EncodeKey(k)
		if err != nil {
			return fmt.Errorf("keystore: %w", err)
		}
		d.Keys = append(d.Keys, b)
	}
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("keystore: %w", err)
	}
	if len(b) > MaxFileSize {
		return fmt.Errorf("keystore: %s would grow past the file store's bound of %d bytes; nothing was written", f.path, MaxFileSize)
	}
	if err := atomicfile.Write(f.path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("keystore: save %s: %w", f.path, err)
	}
	if info, err := os.Stat(f.path); err == nil {
		f.remember(info, m)
	}
	return nil
}

func (f *File) Create(ctx context.Context, k *Key, e *Entry) error {
	return f.change(func(m *Memory) error { return m.Create(ctx, k, e) })
}

func (f *File) Update(ctx context.Context, k *Key, e *Entry) error {
	return f.change(func(m *Memory) error { return m.Update(ctx, k, e) })
}

func (f *File) Get(ctx context.Context, id string) (*Key, error) {
	m, err := f.read(true)
	if err != nil {
		return nil, err
	}
	return m.Get(ctx, id)
}

func (f *File) ByHash(ctx context.Context, hash [32]byte) (*Key, error) {
	m, err := f.read(true)
	if err != nil {
		return nil, err
	}
	return m.ByHash(ctx, hash)
}

func (f *File) List(ctx context.Context, q Query) (*KeyPage, error) {
	m, err := f.read(true)
	if err != nil {
		return nil, err
	}
	return m.List(ctx, q)
}

func (f *File) Changed(ctx context.Context, since time.Time) ([]*Key, bool, error) {
	m, err := f.read(true)
	if err != nil {
		return nil, false, err
	}
	return m.Changed(ctx, since)
}

func (f *File) Audit(ctx context.Context, q AuditQuery) (*AuditPage, error) {
	m, err := f.read(true)
	if err != nil {
		return nil, err
	}
	return m.Audit(ctx, q)
}

func (f *File) Record(ctx context.Context, e *Entry) error {
	return f.change(func(m *Memory) error { return m.Record(ctx, e) })
}

var (
	_ Store = (*File)(nil)
	_ Store = (*Memory)(nil)
)
