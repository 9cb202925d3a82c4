// Package secrets holds what the secret-reference resolvers share: a once-per-secret cache
// that never keeps a failure, picking one key out of a JSON secret, and a client built on
// first use. The resolvers themselves live in subpackages (awssm, gcpsm) so a binary links
// only the cloud SDK it uses.
package secrets

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Cache fetches each secret once. Concurrent lookups of one name share a single fetch, and a
// failed fetch is forgotten so the next lookup tries again (a cold start that met a
// throttled API must not be stuck with the error). The zero value is ready to use.
type Cache struct {
	mu      sync.Mutex
	entries map[string]*entry
}

type entry struct {
	done chan struct{}
	val  string
	err  error
}

// Get returns the cached value of name, calling fetch when there is none.
func (c *Cache) Get(ctx context.Context, name string, fetch func(context.Context) (string, error)) (string, error) {
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]*entry{}
	}
	e, ok := c.entries[name]
	if !ok {
		e = &entry{done: make(chan struct{})}
		c.entries[name] = e
		c.mu.Unlock()
		e.val, e.err = fetch(ctx)
		if e.err != nil {
			c.mu.Lock()
			delete(c.entries, name)
			c.mu.Unlock()
		}
		close(e.done)
		return e.val, e.err
	}
	c.mu.Unlock()
	select {
	case <-e.done:
		return e.val, e.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Resolve returns the secret name, or the value of key in it when key is not "", fetching the
// secret as Get does.
func (c *Cache) Resolve(ctx context.Context, name, key string, fetch func(context.Context) (string, error)) (string, error) {
	val, err := c.Get(ctx, name, fetch)
	if err != nil {
		return "", err
	}
	if key == "" {
		return val, nil
	}
	v, err := JSONKey(val, key)
	if err != nil {
		return "", fmt.Errorf("secret %s: %w", name, err)
	}
	return v, nil
}

// Lazy defers building a client to the first reference, so a config without references of a
// scheme pays nothing for its client at cold start. The first call builds, with its context;
// every call returns what that build returned.
func Lazy[T any](build func(context.Context) (T, error)) func(context.Context) (T, error) {
	var (
		once sync.Once
		v    T
		err  error
	)
	return func(ctx context.Context) (T, error) {
		once.Do(func() { v, err = build(ctx) })
		return v, err
	}
}

// JSONKey returns the value of key in a secret that holds a JSON object, as Secrets Manager's
// console stores key/value secrets. Strings come back unquoted; numbers and booleans as
// written. Errors name the key and, to help fix a typo, the keys that exist, never a value.
func JSONKey(secret, key string) (string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(secret), &obj); err != nil {
		return "", fmt.Errorf("#%s needs a secret holding a JSON object, and this one is not", key)
	}
	raw, ok := obj[key]
	if !ok {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return "", fmt.Errorf("the secret has no key %q (it has: %s)", key, strings.Join(keys, ", "))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var scalar any
	if err := json.Unmarshal(raw, &scalar); err == nil {
		switch scalar.(type) {
		case float64, bool:
			return string(raw), nil
		}
	}
	return "", fmt.Errorf("key %q of the secret is not a string, number or boolean", key)
}
