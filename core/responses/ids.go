package responses

import "math/rand/v2"

// Ids. A response id is resp_ and 48 random base62 characters (OpenAI's form: a prefix and
// an opaque string). The id of an output item the gateway makes is its kind's prefix (msg,
// fc, rs), then the response's 48 characters, then the item's position in the output in
// base62:
//
//	resp_3kTMd...(48)      msg_3kTMd...(48)0      fc_3kTMd...(48)1
//
// So an item id names the response that holds it, and an item_reference to it is resolved
// with one read of that stored response (Store.Get by id and key), with nothing more to
// write when a response is stored and nothing to scan: DynamoDB and Firestore look a
// response up by its key alone, and an index from item to response would cost every stored
// response a write per item. OpenAI's own ids are lowercase hexadecimal after the prefix,
// which a gateway id never is (a 48-character base62 string is all lowercase hex with odds
// below 1e-27), so the ids of OpenAI's items, which a native route passes through, are told
// apart and left to OpenAI.

const (
	base62   = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	idLength = 48 // the random part of a response id
	// maxItemDigits bounds the position part: 62^4 items is more than any response holds.
	maxItemDigits = 4
)

// NewID returns an id of OpenAI's form for an object: prefix_ and 48 base62 characters.
// Ids only have to be unique; they are not secrets.
func NewID(prefix string) string {
	b := make([]byte, 0, len(prefix)+1+idLength)
	b = append(b, prefix...)
	b = append(b, '_')
	for range idLength {
		b = append(b, base62[rand.IntN(len(base62))])
	}
	return string(b)
}

// itemID is the id of output item i of the response respID. A response id not of the
// gateway's form (a test's) gets items with random ids, which no reference resolves.
func itemID(prefix, respID string, i int) string {
	const resp = "resp_"
	if len(respID) != len(resp)+idLength || respID[:len(resp)] != resp {
		return NewID(prefix)
	}
	b := make([]byte, 0, len(prefix)+1+idLength+2)
	b = append(b, prefix...)
	b = append(b, '_')
	b = append(b, respID[len(resp):]...)
	var digits [maxItemDigits + 8]byte
	n := len(digits)
	for {
		n--
		digits[n] = base62[i%len(base62)]
		i /= len(base62)
		if i == 0 {
			break
		}
	}
	return string(append(b, digits[n:]...))
}

// ItemResponse returns the id of the response whose output holds the item id, when the
// gateway made the item (see itemID), else "".
func ItemResponse(id string) string {
	us := -1
	for i := 0; i < len(id); i++ {
		if id[i] == '_' {
			us = i
			break
		}
	}
	if us <= 0 {
		return ""
	}
	s := id[us+1:]
	if len(s) <= idLength || len(s) > idLength+maxItemDigits {
		return ""
	}
	hex := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return ""
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			hex = false
		}
	}
	if hex {
		return "" // OpenAI's
	}
	return "resp_" + s[:idLength]
}
