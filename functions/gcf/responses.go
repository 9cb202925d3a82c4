package gcf

import (
	"cmp"
	"context"
	"fmt"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/responsestore"
	"github.com/fngate/fngate/core/responsestore/firestorestore"
)

// Environment of stored responses; the Terraform module sets them. The config's responses
// settings, when given, win.
const (
	// EnvResponsesProject is the project of the Firestore database; set, it also turns the
	// store on when the config names none.
	EnvResponsesProject    = "RESPONSES_PROJECT"
	EnvResponsesDatabase   = "RESPONSES_DATABASE"   // default: (default)
	EnvResponsesCollection = "RESPONSES_COLLECTION" // default: config.DefaultResponsesCollection
)

// responseStore opens the Firestore store of stored responses: when the config says
// store: firestore (in the function's own project unless a project is named), or says
// nothing and the environment names a project. Memory and files are refused: instances
// share neither, so a conversation continued on another instance would find nothing. It
// returns nil for none, and what it opened, for the start-up log line. The client dials
// lazily: this adds no latency to the instance's first request, and lives as long as the
// instance.
func responseStore(ctx context.Context, cfg *config.Config, getenv func(string) string) (responsestore.Store, string, error) {
	r := cfg.Responses
	r.Project = cmp.Or(r.Project, getenv(EnvResponsesProject))
	switch r.Kind {
	case "":
		if r.Project == "" {
			return nil, "none", nil
		}
	case config.StoreFirestore:
	case config.StoreNone:
		return nil, "none", nil
	default:
		return nil, "", fmt.Errorf("%s: the Cloud Functions gateway keeps stored responses in Firestore (store: firestore, or none); %s would be each instance's own, so a conversation continued on another instance would find nothing",
			cfg.Locate("responses.store"), r.Kind)
	}
	r.Database = cmp.Or(r.Database, getenv(EnvResponsesDatabase))
	r.Collection = cmp.Or(r.Collection, getenv(EnvResponsesCollection))
	s, _, err := firestorestore.Open(ctx, r)
	if err != nil {
		return nil, "", err
	}
	return s, "firestore " + s.Where(), nil
}
