package emulator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fngate/fngate/core/awsconf"
)

// TestMotoConditionalWritesAreAtomic races writers on one key, round after round, with a
// condition only the first can pass, as DynamoDB guarantees. moto_server (threaded) lets two
// through now and then, more often under load; the launcher's serialized server never does. FNGATE_MOTO_ROUNDS raises the number of rounds (default 40).
func TestMotoConditionalWritesAreAtomic(t *testing.T) {
	db := dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(Moto(t)),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		// fngate's client (see awsconf.SafeBodies), and one request per writer: a retried
		// write that had succeeded would read as a failed condition, hiding a broken call.
		HTTPClient:       awsconf.HTTPClient(),
		RetryMaxAttempts: 1,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	table := fmt.Sprint("atomic-", time.Now().UnixNano())
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		t.Fatal(err)
	}
	rounds := 40
	if n, err := strconv.Atoi(os.Getenv("FNGATE_MOTO_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	const writers = 8
	for round := range rounds {
		var mu sync.Mutex
		var won int
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := db.PutItem(ctx, &dynamodb.PutItemInput{
					TableName: aws.String(table),
					Item: map[string]types.AttributeValue{
						"pk":     &types.AttributeValueMemberS{Value: fmt.Sprint("k", round)},
						"writer": &types.AttributeValueMemberN{Value: strconv.Itoa(w)},
					},
					ConditionExpression: aws.String("attribute_not_exists(pk)"),
				})
				var ccf *types.ConditionalCheckFailedException
				switch {
				case err == nil:
					mu.Lock()
					won++
					mu.Unlock()
				case !errors.As(err, &ccf):
					t.Errorf("PutItem: %v", err)
				}
			}()
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("round %d: %d of %d conditional writes on one new key succeeded, want 1", round, won, writers)
		}
	}
}
