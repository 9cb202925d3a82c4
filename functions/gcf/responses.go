package gcf

import (
	"cmp"
	"context"
	"fmt"

	"cloud.google.com/go/firestore"

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
// store: firestore, or says nothing and the environment names a project. Memory and files
// are refused: instances share neither, so a conversation continued on another instance
// would find nothing. It returns nil for none, and what it opened, for the start-up log
// line. The client dials lazily: this adds no latency to the instance's first request.
func responseStore(ctx context.Context, cfg *config.Config, getenv func(string) string) (responsestore.Store, string, error) {
	r := cfg.Responses
	project := cmp.Or(r.Project, getenv(EnvResponsesProject))
	switch r.Kind {
	case "":
		if project == "" {
			return nil, "none", nil
		}
	case config.StoreFirestore:
		if project == "" {
			project = firestore.DetectProjectID // the function's own
		}
	case config.StoreNone:
		return nil, "none", nil
	default:
		return nil, "", fmt.Errorf("%s: the Cloud Functions gateway keeps stored responses in Firestore (store: firestore, or none); %s would be each instance's own, so a conversation continued on another instance would find nothing",
			cfg.Locate("responses.store"), r.Kind)
	}
	database := cmp.Or(r.Database, getenv(EnvResponsesDatabase), firestore.DefaultDatabaseID)
	collection := cmp.Or(r.Collection, getenv(EnvResponsesCollection), config.DefaultResponsesCollection)
	client, err := firestore.NewClientWithDatabase(ctx, project, database)
	if err != nil {
		return nil, "", fmt.Errorf("responses: %w", err)
	}
	what := fmt.Sprintf("firestore collection %s of database %s", collection, database)
	return firestorestore.New(client, collection, firestorestore.Options{Timeout: r.Timeout.D()}), what, nil
}
