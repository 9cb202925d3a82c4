package responsecache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/fngate/fngate/core/llm"
)

// identityVersion changes whenever what goes into an Identity does, so entries written by an
// older gateway are never taken for a newer one's.
const identityVersion = "fngate-cache-v1"

// MaxKeyBytes bounds Identity.Key: two SHA-256 digests in hex and a dot.
const MaxKeyBytes = 2*sha256.Size*2 + 1

// Scopes: who shares an entry.
const (
	ScopeKey    = "key"    // the key that made it, by the key's id (never its secret)
	ScopeTeam   = "team"   // every key of the key's team (a key without a team: its own)
	ScopeGlobal = "global" // every key that may use the model
)

// Partition is what a request shares entries with before its content is compared: the
// scope it is cached in, and everything outside the request body that shapes its answer.
type Partition struct {
	// Scope is "key:<id>", "team:<name>" or "global" (Partition.ScopeOf).
	Scope string
	// Model is the gateway model.
	Model string
	// Door is the wire the answer is shaped for: entries are never shared across doors.
	// The Chat Completions and Messages doors decode the same conversation into different
	// requests (the Messages door hoists late system messages and carries Anthropic's
	// fields; an Anthropic-wire backend's answer reaches it verbatim), so their answers are
	// not the same answer in two shapes; the Responses door over HTTP and over its WebSocket
	// mode, and any door streamed or not, do share.
	Door string
	// Profile is the request profile the request was read under (strict, extended).
	Profile string
	// Residency is the key's residency: its requests go to other routes, so other answers.
	Residency string
	// Guardrails are the names of the guardrails that apply, in the order they run.
	Guardrails []string
}

// ScopeOf is the Scope of a request under scope, made by the key with id and team.
func ScopeOf(scope, id, team string) string {
	switch {
	case scope == ScopeGlobal:
		return ScopeGlobal
	case scope == ScopeTeam && team != "":
		return "team:" + team
	}
	return "key:" + id
}

// Identity is what an entry is found by: a digest of its partition and one of the request's
// content. They are kept apart so that a semantic cache could search the entries of one
// partition by what their requests mean, which an exact digest cannot do.
type Identity struct {
	Partition [sha256.Size]byte
	Digest    [sha256.Size]byte
}

// Key is the string an entry is stored under: both digests in hex, joined by a dot. It is a
// valid DynamoDB key, Firestore document id and file name.
func (id Identity) Key() string {
	return hex.EncodeToString(id.Partition[:]) + "." + hex.EncodeToString(id.Digest[:])
}

// NewIdentity returns the identity of req under p. Left out of the digest is what does not
// change the answer: stream and stream_options (a hit is replayed in either form), the log
// labels (user, metadata, Claude Code's session, metadata.user_id) and store (a hit on a
// store: true request is stored as a new response, as a miss would be). The model is in the
// partition.
func NewIdentity(p Partition, req *llm.Request) (Identity, error) {
	var id Identity
	part, err := json.Marshal(struct {
		V string
		Partition
	}{identityVersion, p})
	if err != nil {
		return id, err
	}
	id.Partition = sha256.Sum256(part)
	body, err := json.Marshal(normalized(req))
	if err != nil {
		return id, err
	}
	h := sha256.New()
	h.Write(id.Partition[:])
	h.Write(body)
	h.Sum(id.Digest[:0])
	return id, nil
}

// labelFields are the top-level members kept verbatim for native backends that do not
// change the answer.
var labelFields = []string{"stream", "stream_options", "metadata", "user", "store"}

// normalized is req without what NewIdentity leaves out. It never changes req: what it
// clears it clears in copies.
func normalized(req *llm.Request) *llm.Request {
	n := *req
	n.Model, n.Stream = "", false
	n.User, n.Metadata, n.Session = "", nil, ""
	if req.Anthropic != nil {
		a := *req.Anthropic
		a.UserID = ""
		a.Fields = withoutLabels(a.Fields)
		n.Anthropic = &a
	}
	if req.Responses != nil {
		r := *req.Responses
		r.Store = false
		r.Fields = withoutLabels(r.Fields)
		n.Responses = &r
	}
	return &n
}

// withoutLabels is fs less the labels. None left is nil, as a request that sent no fields
// has: an empty list would marshal as [] where that one has null, and a request whose only
// fields were labels (a Responses request with user or metadata) would miss its twin.
func withoutLabels(fs []llm.RawField) []llm.RawField {
	if !slices.ContainsFunc(fs, isLabel) {
		return fs
	}
	if out := slices.DeleteFunc(slices.Clone(fs), isLabel); len(out) > 0 {
		return out
	}
	return nil
}

func isLabel(f llm.RawField) bool { return slices.Contains(labelFields, f.Name) }

// ValidKey reports whether key can name an entry in every store: 1 to MaxKeyBytes letters,
// digits, '.', '-' and '_', starting with neither '.' nor '_'. It is then a DynamoDB key, a
// Firestore document id (never . or .., never __.*__) and a file name that is not hidden and
// holds no path. Identity.Key is always valid; a store refuses to Put an invalid key, and
// finds nothing under one.
func ValidKey(key string) bool {
	if key == "" || len(key) > MaxKeyBytes || key[0] == '.' || key[0] == '_' {
		return false
	}
	for i := range len(key) {
		switch c := key[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}
