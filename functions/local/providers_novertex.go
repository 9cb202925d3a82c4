//go:build novertex

package main

import (
	"errors"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/providers"
)

// errNoVertex is what a config with a vertex connection gets from a server built without it.
var errNoVertex = errors.New("the Vertex AI provider is left out of this build of the local server " +
	"(-tags novertex: `make run` leaves it out while GOOGLE_CLOUD_PROJECT is unset and its SDK is not in the module cache); " +
	"build it in with `make run VERTEX=1` or `go run ./functions/local`")

func init() {
	registerVertex = func(r providers.Registry) {
		r["vertex"] = func(*config.Connection, providers.Env) (providers.Provider, error) { return nil, errNoVertex }
	}
}
