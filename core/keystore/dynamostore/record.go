package dynamostore

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fngate/fngate/core/keystore"
)

// Record puts an audit entry about a change made elsewhere (a route cooled by hand): the
// item every key change's transaction puts, alone, so Audit pages both together.
func (st *Store) Record(ctx context.Context, e *keystore.Entry) error {
	if e == nil {
		return errors.New("keystore: dynamodb: Record of no entry")
	}
	a, err := st.auditPut(e)
	if err != nil {
		return err
	}
	return st.write(ctx, []types.TransactWriteItem{*a}, []error{keystore.ErrExists})
}
