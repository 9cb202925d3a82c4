package dynamotable

import "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

// MaxItemBytes is the largest item the stores write: DynamoDB's 400 KB taken as 400,000
// bytes, below both DynamoDB's own limit (409,600) and moto's (405,000).
const MaxItemBytes = 400_000

// TimeLayout writes the stores' times: RFC 3339 in UTC with nine fractional digits, a fixed
// width, so that the strings sort as the times do and a condition can compare them.
const TimeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// ItemSize is an item's size as DynamoDB counts it against its 400 KB limit: each
// attribute's name and value in bytes. A number is counted as its digits plus one, at least
// what DynamoDB counts (about one byte per two digits, plus one); a boolean is one byte.
func ItemSize(it map[string]types.AttributeValue) int {
	n := 0
	for name, v := range it {
		n += len(name)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			n += len(v.Value)
		case *types.AttributeValueMemberB:
			n += len(v.Value)
		case *types.AttributeValueMemberN:
			n += len(v.Value) + 1
		case *types.AttributeValueMemberBOOL:
			n++
		}
	}
	return n
}
