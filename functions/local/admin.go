package main

import (
	"net/http"
	"strings"

	"github.com/fngate/fngate/core/admin"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/console"
)

// withControlPlane serves the admin API under /admin/v1/ and the console under /console
// beside the gateway, as `make run` shows the whole of fngate in one process; the functions
// keep the two apart (the control plane is a function of its own). The admin API is given the very instances the gateway
// uses (key store, counters, history, route state), so a key made here works at once.
func withControlPlane(gw http.Handler, cfg *config.Config, opt admin.Options) (http.Handler, error) {
	api, err := admin.New(cfg, opt)
	if err != nil {
		return nil, err
	}
	con, err := console.New(api, cfg, console.Options{Keys: opt.Keys, Logger: opt.Logger})
	if err != nil {
		return nil, err
	}
	return con.Beside(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, admin.Prefix) || r.URL.Path == strings.TrimSuffix(admin.Prefix, "/") {
			api.ServeHTTP(w, r)
			return
		}
		gw.ServeHTTP(w, r)
	})), nil
}
