package main

import (
	"fmt"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/responsestore"
)

// responseStore opens the store the config's responses section names: memory keeps stored
// responses for the life of the process (make run's default). nil means none.
func responseStore(cfg *config.Config) (responsestore.Store, error) {
	switch s := cfg.Responses.Store; s {
	case "":
		return nil, nil
	case "memory":
		return responsestore.NewMemory(), nil
	default:
		return nil, fmt.Errorf("responses.store %q is not served by the local server (it keeps stored responses in memory)", s)
	}
}
