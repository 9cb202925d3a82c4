// Package recordfile is what the file stores that keep one file per record (stored
// responses, the response cache) share: the file's layout, a JSON header line and then byte
// strings, each followed by a newline, whose lengths the header gives, so that `cat` shows a
// record and its bytes come back as they went in; and the sweep that removes expired files.
package recordfile

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Encode lays a record out: header as one line of JSON, then each part and a newline.
func Encode(header any, parts ...[]byte) ([]byte, error) {
	head, err := json.Marshal(header)
	if err != nil {
		return nil, err
	}
	n := len(head) + 1
	for _, p := range parts {
		n += len(p) + 1
	}
	b := make([]byte, 0, n)
	b = append(append(b, head...), '\n')
	for _, p := range parts {
		b = append(append(b, p...), '\n')
	}
	return b, nil
}

// ReadHeader reads the header line into v.
func ReadHeader(r *bufio.Reader, v any) error {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("no header: %w", err)
	}
	return json.Unmarshal(line, v)
}

// ReadPart reads a part of n bytes and the newline after it; nil when n is 0.
func ReadPart(r *bufio.Reader, n int) ([]byte, error) {
	if n < 0 {
		return nil, errors.New("negative length")
	}
	b := make([]byte, n+1)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("truncated: %w", err)
	}
	if b[n] != '\n' {
		return nil, errors.New("a part is longer than its header says")
	}
	if n == 0 {
		return nil, nil
	}
	return b[:n], nil
}

// Sweeper removes the expired records of a directory, at most once per Every: a sweep
// reads every header.
type Sweeper struct {
	Every time.Duration

	mu   sync.Mutex
	last time.Time
}

// Sweep removes the files of dir whose names end in suffix and that expired reports, unless
// a sweep began less than Every before now. A failure only leaves files for the next sweep.
// A file replaced between expired's read and its removal is removed too.
func (s *Sweeper) Sweep(dir, suffix string, now time.Time, expired func(path string) bool) {
	s.mu.Lock()
	if now.Sub(s.last) < s.Every {
		s.mu.Unlock()
		return
	}
	s.last = now
	s.mu.Unlock()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), suffix) {
			continue
		}
		if path := filepath.Join(dir, e.Name()); expired(path) {
			_ = os.Remove(path)
		}
	}
}
