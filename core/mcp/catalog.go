package mcp

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"path"
	"regexp"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/mcpcall"
)

// catalog is what one upstream offers, as clients see it: tool and prompt names namespaced
// <server>__<name>, resources with namespaced names and their own URIs.
type catalog struct {
	tools     []*sdk.Tool
	prompts   []*sdk.Prompt
	resources []*sdk.Resource
	templates []*sdk.ResourceTemplate
	// owned maps the namespaced names and the resource URIs to the upstream's own names.
	owned map[string]string
	err   error
	at    time.Time
}

// failedCatalogTTL is how long an instance waits before asking a server that failed again:
// long enough that a server that is down does not slow every list, short enough that one
// back up is soon offered again.
const failedCatalogTTL = 10 * time.Second

// catalogCache holds an upstream's catalog between lists; one list runs at a time.
type catalogCache struct {
	mu      sync.Mutex
	cur     *catalog
	loading chan struct{}
}

func (c *catalogCache) invalidate() {
	c.mu.Lock()
	c.cur = nil
	c.mu.Unlock()
}

// toolName is what MCP allows in a tool's name (2025-11-25), and what model APIs take in a
// function's name, but for the dot.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// catalog returns what u offers, listing it when the instance has no fresh copy.
func (u *upstream) catalogNow(ctx context.Context) (*catalog, error) {
	for {
		c := &u.catalog
		c.mu.Lock()
		if cur := c.cur; cur != nil {
			ttl := u.h.opt.CatalogTTL
			if cur.err != nil {
				ttl = failedCatalogTTL
			}
			if u.h.opt.Now().Sub(cur.at) < ttl {
				c.mu.Unlock()
				return cur, cur.err
			}
		}
		if wait := c.loading; wait != nil {
			c.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		c.loading = done
		c.mu.Unlock()

		// The list is the instance's: it goes on when the caller that started it leaves.
		lctx, cancel := context.WithTimeout(context.Background(), u.timeout())
		cat := u.list(lctx)
		cancel()
		cat.at = u.h.opt.Now()
		if cat.err != nil {
			u.h.opt.Logger.Warn("mcp_server_unavailable", slog.String("server", u.name), slog.String("error", cat.err.Error()))
		}
		c.mu.Lock()
		c.cur, c.loading = cat, nil
		c.mu.Unlock()
		close(done)
		return cat, cat.err
	}
}

// list asks the upstream for everything it offers, once more on a fresh session when the
// one it had fails (a restarted server forgets its sessions).
func (u *upstream) list(ctx context.Context) *catalog {
	var cat *catalog
	for try := 0; try < 2; try++ {
		s, err := u.client(ctx)
		if err != nil {
			return &catalog{err: err}
		}
		if cat = u.listOn(ctx, s); cat.err == nil || ctx.Err() != nil {
			return cat
		}
		u.drop(s)
	}
	return cat
}

func (u *upstream) listOn(ctx context.Context, s *sdk.ClientSession) *catalog {
	cat := &catalog{owned: map[string]string{}}
	var caps *sdk.ServerCapabilities
	if ir := s.InitializeResult(); ir != nil {
		caps = ir.Capabilities
	}
	if caps == nil || caps.Tools != nil {
		for t, err := range bounded(s.Tools(ctx, nil)) {
			if err != nil {
				cat.err = fmt.Errorf("listing tools: %w", err)
				return cat
			}
			if t == nil || !offered(&u.cfg.Tools, t.Name) {
				continue
			}
			name, ok := u.namespaced(t.Name, "tool")
			if !ok {
				continue
			}
			c := *t
			c.Name = name
			cat.tools = append(cat.tools, &c)
			cat.owned[name] = t.Name
		}
	}
	if caps != nil && caps.Prompts != nil {
		for p, err := range bounded(s.Prompts(ctx, nil)) {
			if err != nil {
				cat.err = fmt.Errorf("listing prompts: %w", err)
				return cat
			}
			if p == nil {
				continue
			}
			name, ok := u.namespaced(p.Name, "prompt")
			if !ok {
				continue
			}
			c := *p
			c.Name = name
			cat.prompts = append(cat.prompts, &c)
			cat.owned[name] = p.Name
		}
	}
	if caps != nil && caps.Resources != nil {
		for r, err := range bounded(s.Resources(ctx, nil)) {
			if err != nil {
				cat.err = fmt.Errorf("listing resources: %w", err)
				return cat
			}
			if r == nil || r.URI == "" {
				continue
			}
			c := *r
			c.Name = u.name + config.MCPNamespaceSeparator + r.Name
			cat.resources = append(cat.resources, &c)
			cat.owned[r.URI] = r.URI
		}
		for r, err := range bounded(s.ResourceTemplates(ctx, nil)) {
			if err != nil {
				break // templates are optional: a server may list resources and refuse these
			}
			if r == nil {
				continue
			}
			c := *r
			c.Name = u.name + config.MCPNamespaceSeparator + r.Name
			cat.templates = append(cat.templates, &c)
		}
	}
	return cat
}

// namespaced returns <server>__<name>, or false (logged) when model APIs could not carry it.
func (u *upstream) namespaced(name, kind string) (string, bool) {
	full := u.name + config.MCPNamespaceSeparator + name
	switch {
	case !toolName.MatchString(name):
		u.h.opt.Logger.Warn("mcp_name_skipped", slog.String("server", u.name), slog.String(kind, name),
			slog.String("reason", "characters other than letters, digits, '_', '-' and '.'"))
		return "", false
	case len(full) > config.MaxMCPToolName:
		u.h.opt.Logger.Warn("mcp_name_skipped", slog.String("server", u.name), slog.String(kind, name),
			slog.String("reason", fmt.Sprintf("%s is longer than %d characters", full, config.MaxMCPToolName)))
		return "", false
	}
	return full, true
}

// bounded stops a listing after maxListed items: an upstream cannot make an instance hold
// (or a client page through) an endless list.
func bounded[T any](seq iter.Seq2[T, error]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		n := 0
		for v, err := range seq {
			if err == nil {
				if n++; n > maxListed {
					return
				}
			}
			if !yield(v, err) || err != nil {
				return
			}
		}
	}
}

// offered reports whether the server's allowlist and denylist let its tool through.
func offered(f *config.MCPToolFilter, name string) bool {
	for _, g := range f.Deny {
		if ok, _ := path.Match(g, name); ok {
			return false
		}
	}
	if len(f.Allow) == 0 {
		return true
	}
	for _, g := range f.Allow {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// catalogs returns the catalogs of the servers caller may use, in name order, listing them
// concurrently; a server that cannot be listed is left out (and logged).
func (h *Handler) catalogs(ctx context.Context, caller *mcpcall.Caller) []*catalog {
	out := make([]*catalog, len(h.names))
	var wg sync.WaitGroup
	for i, name := range h.names {
		if !caller.Allows(name, "") {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if cat, err := h.upstreams[name].catalogNow(ctx); err == nil {
				out[i] = cat
			}
		}()
	}
	wg.Wait()
	return out
}
