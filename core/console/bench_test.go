package console

import (
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"testing"

	"github.com/fngate/fngate/core/config"
)

// BenchmarkNew is what the console adds to a cold control-plane function's start: its
// templates parsed once.
func BenchmarkNew(b *testing.B) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for b.Loop() {
		if _, err := New(http.NotFoundHandler(), &config.Config{}, Options{Logger: quiet}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeyPage is one key's page with a month of usage drawn as charts, through the
// admin API in process, as a signed-in admin sees it.
func BenchmarkKeyPage(b *testing.B) {
	f := newFixture(b, "")
	c := f.browser()
	f.signIn(c, adminSecret)
	id, _ := f.createKey(c, url.Values{"name": {"bench"}})
	for b.Loop() {
		if a := f.get(c, "/console/keys/"+id); a.status != http.StatusOK {
			b.Fatal(a.status)
		}
	}
}
