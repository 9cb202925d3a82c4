package config

import (
	"cmp"
	"regexp"
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

// Store names a backing store and its settings. Only the settings of the named kind may be
// given. An empty Kind leaves the choice to the platform (see docs/stored-responses.md).
type Store struct {
	Kind string `yaml:"store"`
	// Path is the file store's directory (DefaultResponsesDir when empty).
	Path string `yaml:"path"`
	// Table is the DynamoDB table (empty: the platform's, from its environment).
	Table string `yaml:"table"`
	// Project, Database and Collection place the Firestore documents. Empty, the platform
	// fills them in (from its environment; then its own project, the (default) database
	// and DefaultResponsesCollection).
	Project    string `yaml:"project"`
	Database   string `yaml:"database"`
	Collection string `yaml:"collection"`
	// Timeout bounds each call to the store (DefaultStoreTimeout when 0), so an unreachable
	// store fails a request quickly instead of holding it.
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
	MaxStoreTimeout     = 30 * time.Second
	DefaultResponsesTTL = 30 * 24 * time.Hour
	// DefaultResponsesDir is the file store's directory when path is not given.
	DefaultResponsesDir = ".fngate/responses"
	// DefaultResponsesCollection is the Firestore collection when collection is not given.
	DefaultResponsesCollection = "fngate_responses"
)

// storeSettings are the settings each kind takes, besides store and timeout.
var storeSettings = map[string][]string{
	StoreNone:      nil,
	StoreMemory:    nil,
	StoreFile:      {"path"},
	StoreDynamoDB:  {"table"},
	StoreFirestore: {"project", "database", "collection"},
}

// DynamoDB table names: 3 to 255 of these characters.
var dynamoTableName = regexp.MustCompile(`^[A-Za-z0-9_.-]{3,255}$`)

// validate checks a store section at prefix ("responses"); extra are the section's own
// settings beyond the store's (ttl).
func (s *Store) validate(bad *problems, prefix string, extra ...string) {
	kinds := []string{StoreMemory, StoreFile, StoreDynamoDB, StoreFirestore, StoreNone}
	if s.Kind != "" && !slices.Contains(kinds, s.Kind) {
		bad.add(prefix+".store", " must be memory, file, dynamodb, firestore or none, got %q", s.Kind)
		return
	}
	given := map[string]string{"path": s.Path, "table": s.Table, "project": s.Project, "database": s.Database, "collection": s.Collection}
	for _, name := range []string{"path", "table", "project", "database", "collection"} {
		switch {
		case given[name] == "" || slices.Contains(storeSettings[s.Kind], name):
		case s.Kind == "":
			bad.add(prefix+"."+name, " is set but %s.store is not: name the store it belongs to", prefix)
		default:
			bad.add(prefix+"."+name, ": the %s store has no %s setting", s.Kind, name)
		}
	}
	// A misspelt setting would otherwise be ignored, as extra keys are elsewhere, and the
	// store would quietly run on its defaults.
	known := append([]string{"store", "timeout", "path", "table", "project", "database", "collection"}, extra...)
	for _, key := range bad.where.children(prefix) {
		if !slices.Contains(known, key) {
			bad.add(prefix+"."+key, " is not a setting of %s (settings: %s)", prefix, strings.Join(known, ", "))
		}
	}
	if s.Table != "" && !dynamoTableName.MatchString(s.Table) {
		bad.add(prefix+".table", ": a DynamoDB table name is 3 to 255 letters, digits, '_', '-' and '.', got %q", s.Table)
	}
	if c := s.Collection; c != "" && (strings.Contains(c, "/") || c == "." || c == ".." || strings.HasPrefix(c, "__") && strings.HasSuffix(c, "__")) {
		bad.add(prefix+".collection", ": a Firestore collection id has no '/', is not . or .., and does not match __.*__, got %q", c)
	}
	switch t := s.Timeout.D(); {
	case t == 0:
		s.Timeout = Duration(DefaultStoreTimeout)
	case t > MaxStoreTimeout:
		bad.add(prefix+".timeout", " must be at most %v (each store call is bounded by it), got %v", MaxStoreTimeout, t)
	}
}

func (r *Responses) validate(bad *problems) {
	r.Store.validate(bad, "responses", "ttl", "compaction_keys")
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
