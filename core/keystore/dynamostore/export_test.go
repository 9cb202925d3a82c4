package dynamostore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fngate/fngate/core/keystore"
)

// Fill puts new keys and their claims as a create would, in batches instead of one
// transaction each: moto copies the whole table for every transaction, which makes the
// suite's thousand keys take many minutes.
func (st *Store) Fill(ctx context.Context, keys []*keystore.Key) error {
	var reqs []types.WriteRequest
	for _, k := range keys {
		it, err := st.keyItem(k)
		if err != nil {
			return err
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}},
			types.WriteRequest{PutRequest: &types.PutRequest{Item: claim(hashPK(k.Hash), hashSort, k.ID)}},
			types.WriteRequest{PutRequest: &types.PutRequest{Item: claim(namePK(k.Name), nameSort, k.ID)}})
	}
	for len(reqs) > 0 {
		batch := reqs[:min(25, len(reqs))]
		reqs = reqs[len(batch):]
		out, err := st.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{st.table: batch}})
		if err != nil {
			return err
		}
		if n := len(out.UnprocessedItems[st.table]); n > 0 {
			return fmt.Errorf("%d items unprocessed", n)
		}
	}
	return nil
}
