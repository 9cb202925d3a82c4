package responsecache

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fngate/fngate/core/internal/atomicfile"
	"github.com/fngate/fngate/core/internal/recordfile"
)

// File is a Store of one file per entry under a directory, for `make run`: entries outlive
// a restart and are shared by the servers of one machine. Each file is written under a
// temporary name and renamed over the old one, so a reader sees a whole entry or none, and
// of concurrent writers of one key (in any process) one wins whole. The files are readable
// by their owner only: an answer may hold what its request did.
//
// A file is named for its key (a valid key is a safe file name, see ValidKey) and holds a
// JSON header line and the body as it was given:
//
//	{"key":"…","model":"m","created":"…","expires":"…","body_bytes":1403}
//	…the body…
//
// Bodies over MaxEntryBytes are refused with ErrTooLarge, as the memory store refuses them.
// Local disks answer or fail at once, so calls take no timeout of their own; a cancelled
// context is honoured before each one. Now is the clock that decides expiry. Expired files
// are removed by a sweep a Put makes at most once a minute.
type File struct {
	Now func() time.Time

	dir   string
	sweep recordfile.Sweeper // of expired files, once a minute at most
}

// entrySuffix ends an entry's file name: atomicfile's temporary files, named for the file
// with a suffix of their own, are never taken for entries.
const entrySuffix = ".entry"

// OpenFile returns a store on dir, creating it.
func OpenFile(dir string) (*File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("responsecache: %w", err)
	}
	return &File{Now: time.Now, dir: dir, sweep: recordfile.Sweeper{Every: time.Minute}}, nil
}

// Dir is the store's directory.
func (f *File) Dir() string { return f.dir }

// fileHeader is an entry file's first line.
type fileHeader struct {
	Key       string    `json:"key"`
	Model     string    `json:"model,omitempty"`
	Created   time.Time `json:"created"`
	Expires   time.Time `json:"expires"`
	BodyBytes int       `json:"body_bytes"`
}

func (f *File) path(key string) string { return filepath.Join(f.dir, key+entrySuffix) }

func (f *File) Get(ctx context.Context, key string) (*Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("responsecache: get: %w", err)
	}
	if !ValidKey(key) {
		return nil, ErrNotFound // Put refuses such keys: none is stored
	}
	e, err := f.read(f.path(key), true)
	if err != nil {
		return nil, err
	}
	if e.Key != key {
		return nil, ErrNotFound // a file renamed by hand holds another key's entry
	}
	return e, nil
}

func (f *File) Put(ctx context.Context, e *Entry) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("responsecache: put: %w", err)
	}
	if !ValidKey(e.Key) {
		return fmt.Errorf("responsecache: put: %.40q is not an entry key", e.Key)
	}
	if len(e.Body) > MaxEntryBytes {
		return fmt.Errorf("%w: a body of %d bytes, over the %d the store keeps", ErrTooLarge, len(e.Body), MaxEntryBytes)
	}
	data, err := recordfile.Encode(fileHeader{Key: e.Key, Model: e.Model, Created: e.Created, Expires: e.Expires, BodyBytes: len(e.Body)}, e.Body)
	if err != nil {
		return fmt.Errorf("responsecache: put: %w", err)
	}
	if err := atomicfile.Write(f.path(e.Key), data, 0o600); err != nil {
		return fmt.Errorf("responsecache: put: %w", err)
	}
	// A file replaced by a fresh entry between the sweep's read and its removal goes too:
	// for a cache, one miss.
	f.sweep.Sweep(f.dir, entrySuffix, f.Now(), func(path string) bool {
		_, err := f.read(path, false)
		return errors.Is(err, ErrNotFound)
	})
	return nil
}

// read loads one file: its header, and its body when whole is set. A missing or expired
// entry is ErrNotFound, and an expired entry's body is not read.
func (f *File) read(path string, whole bool) (*Entry, error) {
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("responsecache: %w", err)
	}
	defer file.Close()
	r := bufio.NewReader(file)
	var h fileHeader
	if err := recordfile.ReadHeader(r, &h); err != nil {
		return nil, fmt.Errorf("responsecache: %s: %w", path, err)
	}
	e := &Entry{Key: h.Key, Model: h.Model, Created: h.Created, Expires: h.Expires}
	if !f.Now().Before(e.Expires) {
		return nil, ErrNotFound
	}
	if !whole {
		return e, nil
	}
	if h.BodyBytes > MaxEntryBytes {
		return nil, fmt.Errorf("responsecache: %s: a body of %d bytes", path, h.BodyBytes)
	}
	if e.Body, err = recordfile.ReadPart(r, h.BodyBytes); err != nil {
		return nil, fmt.Errorf("responsecache: %s: %w", path, err)
	}
	return e, nil
}

var _ Store = (*File)(nil)
