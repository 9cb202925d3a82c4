package awsconf_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/fngate/fngate/core/awsconf"
)

// A body at its limit reads whole; one byte past fails with the caller's error, never a
// silently cut answer.
func TestLimitBody(t *testing.T) {
	tooLarge := errors.New("too large")
	for _, tc := range []struct {
		size, limit int
		ok          bool
	}{{10, 10, true}, {9, 10, true}, {11, 10, false}, {0, 0, true}, {1, 0, false}, {100000, 4096, false}} {
		b := awsconf.LimitBody(io.NopCloser(strings.NewReader(strings.Repeat("x", tc.size))), int64(tc.limit), tooLarge)
		got, err := io.ReadAll(b)
		if tc.ok && (err != nil || len(got) != tc.size) || !tc.ok && !errors.Is(err, tooLarge) {
			t.Errorf("%d bytes under %d: %d read, %v", tc.size, tc.limit, len(got), err)
		}
	}
}
