package firestorestore

import (
	"context"
	"errors"

	"cloud.google.com/go/firestore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fngate/fngate/core/keystore"
)

// Record creates an audit entry about a change made elsewhere (a route cooled by hand): the
// document every key change's transaction creates, alone, so Audit pages both together.
func (s *Store) Record(ctx context.Context, e *keystore.Entry) error {
	if e == nil {
		return errors.New("keystore: firestore: Record of no entry")
	}
	err := s.run(ctx, func(_ context.Context, tx *firestore.Transaction) error { return s.entryWrite(tx, e) })
	if status.Code(errors.Unwrap(err)) == codes.AlreadyExists {
		return keystore.ErrExists
	}
	return err
}
