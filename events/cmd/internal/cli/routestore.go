package cli

import (
	"context"
	"fmt"
	"strings"

	"cloud.google.com/go/firestore"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fngate/fngate/core/routestate"
	"github.com/fngate/fngate/core/routestate/dynamostore"
	"github.com/fngate/fngate/core/routestate/firestorestore"
)

type storeOptions struct {
	firestorePrefix   string
	firestoreDatabase string
}

// openStore opens the store a spec names; the operator's tool links every backend, the
// functions only their own.
func openStore(ctx context.Context, spec string, opt storeOptions) (routestate.Store, func(), error) {
	kind, arg, ok := strings.Cut(spec, ":")
	if !ok || arg == "" {
		return nil, nil, fmt.Errorf("store %q: want file:PATH, dynamodb:TABLE or firestore:PROJECT", spec)
	}
	switch kind {
	case "file":
		f, err := routestate.OpenFile(arg)
		return f, func() {}, err
	case "dynamodb":
		cfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, nil, err
		}
		return dynamostore.New(dynamodb.NewFromConfig(cfg), arg), func() {}, nil
	case "firestore":
		db := opt.firestoreDatabase
		if db == "" {
			db = firestore.DefaultDatabaseID
		}
		c, err := firestore.NewClientWithDatabase(ctx, arg, db)
		if err != nil {
			return nil, nil, err
		}
		return firestorestore.New(c, opt.firestorePrefix), func() { c.Close() }, nil
	}
	return nil, nil, fmt.Errorf("store %q: unknown kind %q (file, dynamodb, firestore)", spec, kind)
}
