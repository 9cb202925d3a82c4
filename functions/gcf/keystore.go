package gcf

import (
	"cmp"
	"context"
	"fmt"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/keystore/firestorestore"
)

// Environment of the key store; the Terraform module sets them. The config's key_store
// settings, when given, win.
const (
	// EnvKeysProject is the project of the Firestore database of the keys issued at runtime
	// and the admin audit log; set, it also turns the store on when the config names none.
	EnvKeysProject    = "KEYS_PROJECT"
	EnvKeysDatabase   = "KEYS_DATABASE"   // default: (default)
	EnvKeysCollection = "KEYS_COLLECTION" // default: config.DefaultKeysCollection
)

// keyStore opens the Firestore key store the config or the environment names, and fills
// cfg.KeyStore in with it (so the counters and the public-function check know that keys
// come from it). Memory, file and DynamoDB are refused: a key made or revoked through one
// instance would stay unknown, or working, on the others. It returns nil for none, and what
// it opened, for the start-up log line. The client dials lazily, adding nothing to the
// instance's start.
func keyStore(ctx context.Context, cfg *config.Config, getenv func(string) string) (keystore.Store, string, error) {
	ks := &cfg.KeyStore
	ks.Project = cmp.Or(ks.Project, getenv(EnvKeysProject))
	switch ks.Kind {
	case "":
		if ks.Project == "" {
			return nil, "none", nil
		}
		ks.Kind = config.StoreFirestore
	case config.StoreFirestore:
	case config.StoreNone:
		return nil, "none", nil
	default:
		return nil, "", fmt.Errorf("%s: the Cloud Functions keep stored keys in Firestore (store: firestore, or set %s; or none); %s would be each instance's own, so a key made or revoked through one instance would be unknown, or still work, on the others",
			cfg.Locate("key_store.store"), EnvKeysProject, ks.Kind)
	}
	ks.Database = cmp.Or(ks.Database, getenv(EnvKeysDatabase))
	ks.Collection = cmp.Or(ks.Collection, getenv(EnvKeysCollection))
	s, _, err := firestorestore.Open(ctx, *ks)
	if err != nil {
		return nil, "", err
	}
	return s, "firestore " + s.Where(), nil
}
