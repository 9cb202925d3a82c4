package responsestore

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fngate/fngate/core/internal/atomicfile"
	"github.com/fngate/fngate/core/internal/recordfile"
	"github.com/fngate/fngate/core/responsestore/internal/record"
)

// File is a Store of one file per response under a directory, for `make run`: responses
// outlive a restart, and `cat` shows one. Each file is written under a temporary name and
// renamed over the old one, so a reader sees a whole response or none, and of concurrent
// writers of one response (in any process) one wins whole. The files are readable by their
// owner only: a response holds a conversation.
//
// A file is named for a hash of its owner and id and holds a JSON header line, the input
// and the response, each as it was given:
//
//	{"id":"resp_…","owner":"app","model":"m","created":"…","expires":"…","input_bytes":812,"response_bytes":1403}
//	[…the input…]
//	{…the response…}
//
// Local disks answer or fail at once, so calls take no timeout of their own; a cancelled
// context is honoured before each one. Now is the clock that decides expiry.
type File struct {
	Now func() time.Time

	dir   string
	sweep recordfile.Sweeper // of expired files, once a minute at most
}

const fileSuffix = ".resp"

// OpenFile returns a store on dir, creating it.
func OpenFile(dir string) (*File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("responsestore: %w", err)
	}
	return &File{Now: time.Now, dir: dir, sweep: recordfile.Sweeper{Every: time.Minute}}, nil
}

// Dir is the store's directory.
func (f *File) Dir() string { return f.dir }

// fileHeader is a stored file's first line.
type fileHeader struct {
	ID            string    `json:"id"`
	Owner         string    `json:"owner"`
	Model         string    `json:"model,omitempty"`
	Created       time.Time `json:"created"`
	Expires       time.Time `json:"expires"`
	InputBytes    int       `json:"input_bytes"`
	ResponseBytes int       `json:"response_bytes"`
}

func (f *File) path(id, owner string) string {
	sum := sha256.Sum256([]byte(record.Key(owner, id)))
	return filepath.Join(f.dir, hex.EncodeToString(sum[:])+fileSuffix)
}

func (f *File) Put(ctx context.Context, s *Stored) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("responsestore: put %s: %w", s.ID, err)
	}
	data, err := recordfile.Encode(fileHeader{ID: s.ID, Owner: s.Owner, Model: s.Model, Created: s.Created, Expires: s.Expires,
		InputBytes: len(s.Input), ResponseBytes: len(s.Response)}, s.Input, s.Response)
	if err != nil {
		return fmt.Errorf("responsestore: put %s: %w", s.ID, err)
	}
	if err := atomicfile.Write(f.path(s.ID, s.Owner), data, 0o600); err != nil {
		return fmt.Errorf("responsestore: put %s: %w", s.ID, err)
	}
	now := f.Now()
	f.sweep.Sweep(f.dir, fileSuffix, now, func(path string) bool {
		old, err := f.read(path, false)
		return err == nil && !now.Before(old.Expires)
	})
	return nil
}

func (f *File) Get(ctx context.Context, id, owner string) (*Stored, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("responsestore: get %s: %w", id, err)
	}
	s, err := f.read(f.path(id, owner), true)
	if err != nil {
		return nil, err
	}
	if s.ID != id || s.Owner != owner || !f.Now().Before(s.Expires) {
		return nil, ErrNotFound
	}
	return s, nil
}

func (f *File) Delete(ctx context.Context, id, owner string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("responsestore: delete %s: %w", id, err)
	}
	path := f.path(id, owner)
	s, err := f.read(path, false)
	if err != nil {
		return err
	}
	if s.ID != id || s.Owner != owner {
		return ErrNotFound
	}
	err = os.Remove(path)
	switch {
	case errors.Is(err, fs.ErrNotExist): // a concurrent Delete won
		return ErrNotFound
	case err != nil:
		return fmt.Errorf("responsestore: delete %s: %w", id, err)
	case !f.Now().Before(s.Expires):
		return ErrNotFound // gone already, as far as anyone could tell
	}
	return nil
}

// read loads one file: its header, and its input and response when whole is set. A missing
// file is ErrNotFound.
func (f *File) read(path string, whole bool) (*Stored, error) {
	file, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("responsestore: %w", err)
	}
	defer file.Close()
	r := bufio.NewReader(file)
	var h fileHeader
	if err := recordfile.ReadHeader(r, &h); err != nil {
		return nil, fmt.Errorf("responsestore: %s: %w", path, err)
	}
	s := &Stored{ID: h.ID, Owner: h.Owner, Model: h.Model, Created: h.Created, Expires: h.Expires}
	if !whole {
		return s, nil
	}
	if s.Input, err = recordfile.ReadPart(r, h.InputBytes); err == nil {
		s.Response, err = recordfile.ReadPart(r, h.ResponseBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("responsestore: %s: %w", path, err)
	}
	return s, nil
}

var _ Store = (*File)(nil)
