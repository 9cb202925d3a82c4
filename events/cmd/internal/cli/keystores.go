package cli

import (
	"context"
	"fmt"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
)

// openSharedKeyStore opens the file, DynamoDB and Firestore key stores.
func openSharedKeyStore(_ context.Context, cfg *config.Config) (keystore.Store, func(), error) {
	return nil, nil, fmt.Errorf("%s: store %q is not built into this command yet", cfg.Locate("key_store.store"), cfg.KeyStore.Kind)
}
