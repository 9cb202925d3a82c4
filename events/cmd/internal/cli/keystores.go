package cli

import (
	"context"
	"fmt"

	"github.com/fngate/fngate/core/awsconf/sdkconfig"
	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/keystore/dynamostore"
)

// openSharedKeyStore opens the stores more than one process can share: file (several local
// servers), DynamoDB and Firestore (the functions).
func openSharedKeyStore(ctx context.Context, cfg *config.Config) (keystore.Store, func(), error) {
	ks := cfg.KeyStore
	switch ks.Kind {
	case config.StoreFile:
		path := ks.Path
		if path == "" {
			path = config.DefaultKeysFile
		}
		s, err := keystore.OpenFile(path)
		if err != nil {
			return nil, nil, err
		}
		return s, func() {}, nil
	case config.StoreDynamoDB:
		s, err := dynamostore.Open(ctx, sdkconfig.Load, ks)
		if err != nil {
			return nil, nil, err
		}
		return s, func() {}, nil
	}
	return nil, nil, fmt.Errorf("%s: store %q is not built into this command yet", cfg.Locate("key_store.store"), ks.Kind)
}
