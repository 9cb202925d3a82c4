package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"

	"github.com/fngate/fngate/core/admin"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/routestate"
)

// direct is the admin API without a server: the admin handler itself, built in this process
// on the stores the config names, called as the principal cli:<user> with the admin role.
// Every rule (validation, name clashes, versions, the audit entry written with each change)
// is the API's own code, not a copy of it.
func (o *op) direct(ctx context.Context) (*client, func(), error) {
	if _, err := os.Stat(o.cfg); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(o.env.Stderr, "fngate: no -url (env FNGATE_ADMIN_URL) and no config at %s: give -url to call the admin API, or -config PATH to open the gateway's stores directly\n", o.cfg)
		return nil, nil, errUsage
	}
	cfg, err := loadConfig(ctx, o.cfg, o.env.Getenv)
	if err != nil {
		return nil, nil, err
	}
	var closers []func()
	done := func() {
		for _, c := range closers {
			c()
		}
	}
	opt := admin.Options{
		Now: o.env.Now,
		// The handler's request lines are for a server's log; here stdout is the answer's.
		Logger: slog.New(slog.NewTextHandler(o.env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	keys, closeKeys, err := openKeyStore(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, closeKeys)
	opt.Keys = keys
	if cfg.Counters.Kind != "" && cfg.Counters.Kind != config.StoreMemory {
		store, closeCounters, err := openCounters(ctx, cfg.Counters)
		if err != nil {
			done()
			return nil, nil, fmt.Errorf("counters: %w", err)
		}
		closers = append(closers, closeCounters)
		opt.Counters = store
		if h, ok := store.(counters.History); ok {
			opt.History = h
		}
	}
	spec := o.routeStore
	if spec == "" {
		spec = "file:" + routestate.DefaultFile
	}
	routes, closeRoutes, err := openStore(ctx, spec, storeOptions{firestorePrefix: o.env.Getenv("ROUTE_STATE_PREFIX"), firestoreDatabase: o.env.Getenv("ROUTE_STATE_DATABASE")})
	if err != nil {
		done()
		return nil, nil, err
	}
	closers = append(closers, closeRoutes)
	opt.Routes = routes
	h, err := admin.New(cfg, opt)
	if err != nil {
		done()
		return nil, nil, err
	}
	name := o.env.User
	if name == "" {
		name = osUser(o.env.Getenv)
	}
	p := &admin.Principal{ID: "cli:" + name, Name: name, Role: keystore.RoleAdmin}
	with := func(ctx context.Context) context.Context { return admin.WithPrincipal(ctx, p) }
	return &client{base: "http://fngate.direct", http: &http.Client{Transport: handlerTransport{h: h, with: with}}}, done, nil
}

// openKeyStore opens the key store the config names; none is nil (the API then lists the
// config's keys and refuses changes). A memory store is the gateway process's own, which no
// other process can open.
func openKeyStore(ctx context.Context, cfg *config.Config) (keystore.Store, func(), error) {
	switch ks := cfg.KeyStore; ks.Kind {
	case "", config.StoreNone:
		return nil, func() {}, nil
	case config.StoreMemory:
		return nil, nil, errors.New("key_store: memory lives in the gateway's process, which this command cannot reach: give -url (the admin API), or a config whose key_store is file, dynamodb or firestore")
	}
	return openSharedKeyStore(ctx, cfg)
}
