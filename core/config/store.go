package config

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"
)

// Store kinds: where the gateway keeps state that outlives a request.
const (
	StoreNone      = "none"      // keep nothing
	StoreMemory    = "memory"    // this process only: make run, tests
	StoreFile      = "file"      // files under a directory: make run across restarts
	StoreDynamoDB  = "dynamodb"  // a DynamoDB table: the Lambda function
	StoreFirestore = "firestore" // a Firestore collection: Cloud Functions
)

// Store names a backing store and its settings, in a section that keeps state in one
// (responses, counters). Only the settings of the named kind may be given. An empty Kind
// leaves the choice to the platform (see docs/stored-responses.md and docs/limits.md).
type Store struct {
	Kind string `yaml:"store"`
	// Path is the file store's place: the responses' directory (DefaultResponsesDir when
	// empty), the counters' file (DefaultCountersFile).
	Path string `yaml:"path"`
	// Table is the DynamoDB table (empty: the platform's, from its environment).
	Table string `yaml:"table"`
	// Project, Database and Collection place the Firestore documents. Empty, the platform
	// fills them in (from its environment; then its own project, the (default) database
	// and DefaultResponsesCollection). The counters take no collection: theirs is named by
	// their prefix.
	Project    string `yaml:"project"`
	Database   string `yaml:"database"`
	Collection string `yaml:"collection"`
	// Timeout bounds each call to the store (when 0, the section's default:
	// DefaultStoreTimeout, DefaultCountersTimeout), so an unreachable store fails a request
	// quickly instead of holding it.
	Timeout Duration `yaml:"timeout"`
}

// Responses is where the Responses door keeps stored responses (store: true, then
// previous_response_id and GET / DELETE /v1/responses/{id}).
type Responses struct {
	Store `yaml:",inline"`
	// TTL is how long a stored response is kept (DefaultResponsesTTL when 0).
	TTL Duration `yaml:"ttl"`
	// CompactionKeys seal the summaries POST /v1/responses/compact writes on routes that
	// are not OpenAI's (compaction.go); none leaves compaction to OpenAI's routes.
	CompactionKeys []CompactionKey `yaml:"compaction_keys"`
}

// Store defaults and bounds.
const (
	DefaultStoreTimeout = 2 * time.Second
	// MaxStoreTimeout keeps a store call short next to the request it serves.
	MaxStoreTimeout = 30 * time.Second
	// DefaultResponsesTTL is OpenAI's own retention of stored responses.
	DefaultResponsesTTL = 30 * 24 * time.Hour
	// DefaultResponsesDir is the file store's directory when path is not given.
	DefaultResponsesDir = ".fngate/responses"
	// DefaultResponsesCollection is the Firestore collection when collection is not given.
	DefaultResponsesCollection = "fngate_responses"
)

// storeSection is what one section that names a store takes, so that every such section is
// checked by the same code.
type storeSection struct {
	name  string   // the section's key: responses, counters
	kinds []string // the kinds it takes, in the order a refusal lists them
	// settings are the kinds' settings besides store and timeout, each of one kind, in the
	// order a refusal lists them.
	settings []storeSetting
	// platform are the kinds whose settings may be given without naming the store: those
	// a platform picks when the store is unset, which then takes them.
	platform []string
	own      []string // the section's own settings, for every kind
	timeout  time.Duration
}

type storeSetting struct{ kind, name string }

var responsesStore = storeSection{
	name:  "responses",
	kinds: []string{StoreMemory, StoreFile, StoreDynamoDB, StoreFirestore, StoreNone},
	settings: []storeSetting{{StoreFile, "path"}, {StoreDynamoDB, "table"},
		{StoreFirestore, "project"}, {StoreFirestore, "database"}, {StoreFirestore, "collection"}},
	own:     []string{"ttl", "compaction_keys"},
	timeout: DefaultStoreTimeout,
}

// validDynamoTableName reports whether name is a DynamoDB table name: 3 to 255 of
// [A-Za-z0-9_.-]. A loop, not the regexp `^[A-Za-z0-9_.-]{3,255}$`: compiling that
// repetition unrolls it 255 times, 1 ms and 230 KB at every cold start (GODEBUG=inittrace=1).
func validDynamoTableName(name string) bool {
	if len(name) < 3 || len(name) > 255 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}

// validate checks a store section and sets its timeout's default; more are the values of
// the section's settings beyond the Store's (empty: not given).
func (s *Store) validate(bad *problems, sec *storeSection, more map[string]string) {
	prefix := sec.name
	if s.Kind != "" && !slices.Contains(sec.kinds, s.Kind) {
		bad.add(prefix+".store", " must be %s, got %q", orList(sec.kinds), s.Kind)
		return
	}
	given := map[string]string{"path": s.Path, "table": s.Table, "project": s.Project, "database": s.Database, "collection": s.Collection}
	maps.Copy(given, more)
	known := []string{"store", "timeout"}
	for _, set := range sec.settings {
		known = append(known, set.name)
		switch {
		case given[set.name] == "" || set.kind == s.Kind:
		case s.Kind == "" && slices.Contains(sec.platform, set.kind):
		case s.Kind == "":
			bad.add(prefix+"."+set.name, " is set but %s.store is not: name the store it belongs to", prefix)
		default:
			bad.add(prefix+"."+set.name, ": the %s store has no %s setting", s.Kind, set.name)
		}
	}
	// A misspelt setting would otherwise be ignored, as extra keys are elsewhere, and the
	// store would quietly run on its defaults.
	known = append(known, sec.own...)
	for _, key := range bad.where.children(prefix) {
		if !slices.Contains(known, key) {
			bad.add(prefix+"."+key, " is not a setting of %s (settings: %s)", prefix, strings.Join(known, ", "))
		}
	}
	if s.Table != "" && slices.Contains(known, "table") && !validDynamoTableName(s.Table) {
		bad.add(prefix+".table", ": a DynamoDB table name is 3 to 255 letters, digits, '_', '-' and '.', got %q", s.Table)
	}
	if c := s.Collection; c != "" && slices.Contains(known, "collection") && (strings.Contains(c, "/") || c == "." || c == ".." || strings.HasPrefix(c, "__") && strings.HasSuffix(c, "__")) {
		bad.add(prefix+".collection", ": a Firestore collection id has no '/', is not . or .., and does not match __.*__, got %q", c)
	}
	switch t := s.Timeout.D(); {
	case t == 0:
		s.Timeout = Duration(sec.timeout)
	case t > MaxStoreTimeout:
		bad.add(prefix+".timeout", " must be at most %v (each store call is bounded by it), got %v", MaxStoreTimeout, t)
	}
}

// orList writes "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

func (r *Responses) validate(bad *problems) {
	r.Store.validate(bad, &responsesStore, nil)
	switch t := r.TTL.D(); {
	case t == 0:
		r.TTL = Duration(DefaultResponsesTTL)
	case t < time.Second:
		bad.add("responses.ttl", " must be at least 1s, got %v", t)
	}
}

// children lists the keys of the mapping at path, in document order; none for a config
// built in code.
func (l *located) children(path string) []string {
	if l == nil {
		return nil
	}
	var out []string
	for p := range l.lines {
		if rest, ok := strings.CutPrefix(p, path+"."); ok && !strings.ContainsAny(rest, ".[") {
			out = append(out, rest)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(l.lines[path+"."+a], l.lines[path+"."+b]), strings.Compare(a, b))
	})
	return out
}
