package dynamocounters

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/fngate/fngate/core/counters"
)

// The usage history (counters.History) lives in the counters table, beside the counter items
// and in items of its own, so an admission's item stays as small as it was:
//
//	pk          "hist#<key>#<YYYY-MM-DD>": one item per key and UTC day
//	key, day    the key and the day, for whoever reads the table by hand
//	r|<model>   requests of the model that day; i|, o|, c|: input and output tokens, nano-USD
//	expires_at  the end of the day plus counters.HistoryDays: the table's TTL deletes it then
//
// Each request adds with one UpdateItem (ADD is atomic, so instances never lose each
// other's counts). A model's name is an attribute name as it is, behind an expression
// placeholder, so '/', '.', ':' and the rest need no escaping; its letter and '|' before it
// keep it apart from the item's own attributes. The table has no sort key (a counter item
// needs none, and adding one would replace the table), so a range of days is read with
// BatchGetItem, 100 days a call.
const (
	HistoryPrefix = "hist#"
	attrKey       = "key"
	attrHistDay   = "day"
	// historyBatch is BatchGetItem's limit of keys per call.
	historyBatch = 100
	// maxModel bounds a model name: one item holds every model of a key's day, within
	// DynamoDB's 400 KB item.
	maxModel = 512
)

// usageLetters name a usage's counts in attribute names.
var usageLetters = [4]string{"r|", "i|", "o|", "c|"}

func historyKey(key, day string) map[string]types.AttributeValue {
	return keyOf(HistoryPrefix + key + "#" + day)
}

// HistoryExpires is when the TTL deletes the item of day: the end of the day plus
// counters.HistoryDays.
func HistoryExpires(day time.Time) time.Time {
	d := day.UTC().Truncate(24 * time.Hour)
	return d.AddDate(0, 0, counters.HistoryDays+1)
}

func checkUsage(key, model string) error {
	switch {
	case key == "":
		return fmt.Errorf("dynamocounters: usage needs a key")
	case model == "" || len(model) > maxModel:
		return fmt.Errorf("dynamocounters: usage of %s: a model name must have 1 to %d bytes", key, maxModel)
	}
	return nil
}

// AddUsage adds u to the key's day with one UpdateItem.
func (s *Store) AddUsage(ctx context.Context, key string, at time.Time, model string, u counters.Usage) error {
	if err := checkUsage(key, model); err != nil {
		return err
	}
	day := counters.Day(at)
	e := newExpr()
	e.set = append(e.set,
		e.name(attrKey)+" = "+e.value(&types.AttributeValueMemberS{Value: key}),
		e.name(attrHistDay)+" = "+e.value(&types.AttributeValueMemberS{Value: day}),
		e.name(AttrTTL)+" = "+e.value(n(HistoryExpires(at).Unix())))
	for i, v := range [4]int64{u.Requests, u.InputTokens, u.OutputTokens, u.CostNanoUSD} {
		e.add = append(e.add, e.name(usageLetters[i]+model)+" "+e.value(n(v)))
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       historyKey(key, day),
		UpdateExpression:          aws.String(e.update()),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	})
	if err != nil {
		return fmt.Errorf("dynamocounters: add usage of %s: %w", key, err)
	}
	return nil
}

// Usage reads the key's days from from to to, 100 days a BatchGetItem.
func (s *Store) Usage(ctx context.Context, key string, from, to time.Time) ([]counters.DayUsage, error) {
	days := counters.Days(from, to)
	byDay := map[string]map[string]counters.Usage{}
	for start := 0; start < len(days); start += historyBatch {
		chunk := days[start:min(start+historyBatch, len(days))]
		keys := make([]map[string]types.AttributeValue, len(chunk))
		for i, d := range chunk {
			keys[i] = historyKey(key, d)
		}
		if err := s.batchGet(ctx, keys, func(item map[string]types.AttributeValue) error {
			d, ok := item[attrHistDay].(*types.AttributeValueMemberS)
			if !ok {
				return fmt.Errorf("dynamocounters: usage of %s: %w (an item without its day)", key, counters.ErrCorrupt)
			}
			byDay[d.Value] = usageOf(item)
			return nil
		}); err != nil {
			return nil, fmt.Errorf("dynamocounters: usage of %s: %w", key, err)
		}
	}
	var out []counters.DayUsage
	for _, d := range days {
		models := make([]string, 0, len(byDay[d]))
		for m := range byDay[d] {
			models = append(models, m)
		}
		sort.Strings(models)
		for _, m := range models {
			out = append(out, counters.DayUsage{Day: d, Model: m, Usage: byDay[d][m]})
		}
	}
	return out, nil
}

// batchGet reads keys (at most 100), calling each for every item found, and asks again for
// the keys DynamoDB left unprocessed (throttling), a bounded number of times.
func (s *Store) batchGet(ctx context.Context, keys []map[string]types.AttributeValue, each func(map[string]types.AttributeValue) error) error {
	req := map[string]types.KeysAndAttributes{s.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
	for try := 0; ; try++ {
		out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return err
		}
		for _, item := range out.Responses[s.table] {
			if err := each(item); err != nil {
				return err
			}
		}
		left := out.UnprocessedKeys[s.table]
		if len(left.Keys) == 0 {
			return nil
		}
		if try == 5 {
			return fmt.Errorf("%d days still unread after %d tries (throttled)", len(left.Keys), try+1)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(50<<try) * time.Millisecond):
		}
		req = map[string]types.KeysAndAttributes{s.table: left}
	}
}

// usageOf reads an item's models and their counts.
func usageOf(item map[string]types.AttributeValue) map[string]counters.Usage {
	out := map[string]counters.Usage{}
	for name, v := range item {
		for i, l := range usageLetters {
			model, ok := strings.CutPrefix(name, l)
			if !ok {
				continue
			}
			nv, ok := v.(*types.AttributeValueMemberN)
			if !ok {
				continue
			}
			x, err := strconv.ParseInt(nv.Value, 10, 64)
			if err != nil {
				continue
			}
			u := out[model]
			switch i {
			case 0:
				u.Requests = x
			case 1:
				u.InputTokens = x
			case 2:
				u.OutputTokens = x
			default:
				u.CostNanoUSD = x
			}
			out[model] = u
		}
	}
	return out
}

var _ counters.History = (*Store)(nil)
