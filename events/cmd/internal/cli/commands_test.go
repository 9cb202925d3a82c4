package cli

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/core/counters"
)

// mode is one way of reaching the admin API: over HTTP to a real handler on loopback, or
// directly on the stores a config file names.
type mode struct {
	name  string
	env   map[string]string
	actor string // who the audit log says made the changes
	// addUsage puts a request's usage in the history the mode reads.
	addUsage func(t *testing.T, key string, at time.Time, model string, u counters.Usage)
}

func httpMode(t *testing.T) mode {
	a := newAPI(t)
	return mode{name: "http", env: a.env(adminToken), actor: "key:ops",
		addUsage: func(t *testing.T, key string, at time.Time, model string, u counters.Usage) {
			if err := a.history.AddUsage(context.Background(), key, at, model, u); err != nil {
				t.Fatal(err)
			}
		}}
}

// directMode is a config whose key store, counters (and their history) and route state are
// files, as several local servers share them.
func directMode(t *testing.T) mode {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "fngate.yaml")
	counterFile := filepath.Join(dir, "counters.json")
	stores := "key_store: {store: file, path: " + filepath.Join(dir, "keys.json") + "}\ncounters: {store: file, path: " + counterFile + "}\n"
	if err := os.WriteFile(cfgPath, []byte(configYAML(stores)), 0o600); err != nil {
		t.Fatal(err)
	}
	return mode{name: "direct", actor: "cli:tester",
		env: map[string]string{"FNGATE_CONFIG": cfgPath, "FNGATE_ROUTE_STORE": "file:" + filepath.Join(dir, "routestate.json")},
		addUsage: func(t *testing.T, key string, at time.Time, model string, u counters.Usage) {
			f, err := counters.OpenFile(counterFile)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.AddUsage(context.Background(), key, at, model, u); err != nil {
				t.Fatal(err)
			}
		}}
}

// step is one command of a scenario and what it must print.
type step struct {
	args   []string
	code   int
	stdout string // a regexp stdout must match (code 0), or stderr (code != 0)
	stderr string // a regexp stderr must match, if set
	// json, when set, decodes stdout (which must be one JSON document) and checks it.
	json func(t *testing.T, doc map[string]any)
}

// run runs the steps in order in env; $ID, $ID2 and $TODAY in arguments and patterns are
// replaced by the ids the creates printed and today's date.
func (m mode) run(t *testing.T, steps []step, vars map[string]string) {
	t.Helper()
	expand := func(s string) string {
		names := slices.Collect(maps.Keys(vars))
		slices.SortFunc(names, func(a, b string) int { return len(b) - len(a) }) // $ID2 before $ID
		for _, k := range names {
			s = strings.ReplaceAll(s, "$"+k, vars[k])
		}
		return s
	}
	for i, st := range steps {
		args := make([]string, len(st.args))
		for j, a := range st.args {
			args[j] = expand(a)
		}
		r := runFngate(t, m.env, "", args...)
		noSecret(t, r, adminToken, viewerToken)
		// A key's secret: on stdout, once, only where the API answered one; never on stderr.
		if n := strings.Count(r.stdout, "sk-fngate-"); n > 1 || strings.Contains(r.stderr, "sk-fngate-") {
			t.Fatalf("step %d: fngate %v: a secret printed %d times on stdout, or on stderr:\n%+v", i, args, n, r)
		}
		out := r.stdout
		if st.code != 0 {
			out = r.stderr
		}
		if r.code != st.code || !regexp.MustCompile(expand(st.stdout)).MatchString(out) {
			t.Fatalf("step %d: fngate %v: exit %d, want %d and %s:\n%+v", i, args, r.code, st.code, expand(st.stdout), r)
		}
		if st.stderr != "" && !regexp.MustCompile(expand(st.stderr)).MatchString(r.stderr) {
			t.Fatalf("step %d: fngate %v: stderr lacks %s:\n%s", i, args, expand(st.stderr), r.stderr)
		}
		if st.json != nil {
			var doc map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatalf("step %d: fngate %v: stdout is not one JSON document: %v\n%s", i, args, err, r.stdout)
			}
			st.json(t, doc)
		}
		if id := regexp.MustCompile(`(?m)^id\s+(key_\w{24})$`).FindStringSubmatch(r.stdout); id != nil && vars["ID"] == "" {
			vars["ID"] = id[1]
		}
		if id, _ := jsonField(r.stdout, "id"); strings.HasPrefix(id, "key_") && vars["ID2"] == "" && vars["ID"] != id {
			vars["ID2"] = id
		}
	}
}

func jsonField(doc, field string) (string, bool) {
	var m map[string]any
	if json.Unmarshal([]byte(doc), &m) != nil {
		return "", false
	}
	s, ok := m[field].(string)
	return s, ok
}

var secretLine = `(?m)^key\s+sk-fngate-[0-9A-Za-z]{43}$`

// The keys commands, in both modes, with and without -json: create (the secret once, on
// stdout, a warning on stderr), list, get, update (half a rate keeps the other half; a stale
// version is refused), disable, enable, rotate, delete; the audit log names who did each.
func TestKeys(t *testing.T) {
	for _, m := range []mode{httpMode(t), directMode(t)} {
		t.Run(m.name, func(t *testing.T) { keySteps(t, m) })
	}
}

func keySteps(t *testing.T, m mode) {
	vars := map[string]string{}
	m.run(t, []step{
		{args: []string{"keys", "create", "-name", "svc", "-team", "t1", "-owner", "ana", "-models", "team/*, other/*", "-rpm", "10", "-tpm", "1000", "-usd-day", "5", "-expires", "30d"},
			stdout: secretLine, stderr: `secret is shown once, now: store it; if it is lost, .fngate keys rotate key_\w+.`},
		{args: []string{"keys", "create", "-json", "-name", "svc2", "-description", "batch jobs", "-per-model", `{"team/*":{"budget":{"usd_per_month":50}}}`},
			stdout: `"key": ?"sk-fngate-`, stderr: `secret is shown once`, json: func(t *testing.T, d map[string]any) {
				if d["name"] != "svc2" || d["source"] != "store" || d["version"] != 1.0 || d["per_model"] == nil {
					t.Errorf("create -json: %v", d)
				}
			}},
		{args: []string{"keys", "list"}, stdout: `(?s)ID\s+NAME\s+TEAM\s+ROLE\s+MODELS\s+STATE\s+SOURCE\s+UPDATED\n.*app\s+-\s+-\s+\*\s+active\s+config.*$ID\s+svc\s+t1\s+-\s+team/\*,other/\*\s+active\s+store`},
		{args: []string{"keys", "list", "-team", "t1", "-json"}, stdout: `^\{`, json: func(t *testing.T, d map[string]any) {
			data, _ := d["data"].([]any)
			if len(data) != 1 || data[0].(map[string]any)["name"] != "svc" {
				t.Errorf("list -team t1 -json: %v", d)
			}
			if _, ok := d["next"]; !ok {
				t.Errorf("list -json lacks the API's next: %v", d)
			}
		}},
		{args: []string{"keys", "list", "-limit", "1"}, stdout: `ID\s+NAME`, stderr: `more: fngate keys list -after \S+`},
		{args: []string{"keys", "get", "$ID"}, stdout: `(?s)name\s+svc\n.*rate\s+\{"requests_per_minute":10,"tokens_per_minute":1000\}.*budget\s+\{"usd_per_day":5,"usd_per_month":0\}.*expires_at\s+20\d\d-.*created\s+\S+ by ` + regexp.QuoteMeta(m.actor)},
		{args: []string{"keys", "get", "$ID", "-json"}, stdout: `"id": ?"$ID"`, json: func(t *testing.T, d map[string]any) {
			if _, ok := d["key"]; ok {
				t.Errorf("get shows a secret: %v", d)
			}
		}},
		// Half a rate: the key's other half stays.
		{args: []string{"keys", "update", "-rpm", "20", "$ID"}, stdout: `(?s)rate\s+\{"requests_per_minute":20,"tokens_per_minute":1000\}.*version\s+2`},
		{args: []string{"keys", "update", "-version", "1", "-description", "stale", "$ID"}, code: 1, stdout: `fngate: .*\(409 conflict_error`},
		{args: []string{"keys", "update", "-json", "-expires", "never", "-models", "", "$ID"}, stdout: `"expires_at": ?null`, json: func(t *testing.T, d map[string]any) {
			if ms, _ := d["models"].([]any); len(ms) != 0 || d["version"] != 3.0 {
				t.Errorf("update -json: %v", d)
			}
		}},
		// Guardrails: added, none beyond the models', an unknown one refused naming it, cleared.
		{args: []string{"keys", "update", "-guardrails", "pii:input:mask", "$ID"}, stdout: `(?m)^guardrails\s+pii:input:mask$`},
		{args: []string{"keys", "update", "-guardrails", "none", "$ID"}, stdout: `(?m)^guardrails\s+none$`},
		{args: []string{"keys", "update", "-guardrails", "nope", "$ID"}, code: 1, stdout: `fngate: guardrails\[0\]\.name: no guardrail "nope" is defined \(guardrails: pii\) \(400 invalid_request_error invalid_guardrails, param guardrails\)`},
		{args: []string{"keys", "update", "-guardrails", "", "$ID"}, stdout: `(?m)^guardrails\s+-$`},
		{args: []string{"keys", "disable", "$ID"}, stdout: `state\s+disabled`},
		{args: []string{"keys", "enable", "-json", "$ID"}, stdout: `"disabled": ?false`},
		{args: []string{"keys", "disable", "-json", "$ID"}, stdout: `"disabled": ?true`},
		{args: []string{"keys", "enable", "$ID"}, stdout: `state\s+active`},
		{args: []string{"keys", "rotate", "$ID"}, stdout: secretLine, stderr: `secret is shown once`},
		{args: []string{"keys", "rotate", "$ID", "-json"}, stdout: `"key": ?"sk-fngate-`, stderr: `secret is shown once`},
		{args: []string{"keys", "delete", "$ID"}, stdout: `state\s+deleted`},
		{args: []string{"keys", "delete", "-json", "$ID2"}, stdout: `"deleted": ?true`},
		{args: []string{"keys", "list", "-team", "t1"}, stdout: `^ID\s+NAME\s+TEAM\s+ROLE\s+MODELS\s+STATE\s+SOURCE\s+UPDATED\n$`},
		{args: []string{"keys", "list", "-team", "t1", "-deleted"}, stdout: `$ID\s+svc\s+t1\s+.*deleted`},
		{args: []string{"keys", "get", "nope"}, code: 1, stdout: `fngate: .*\(400 invalid_request_error`},
		{args: []string{"keys", "get", "key_000000000000000000000000"}, code: 1, stdout: `fngate: .*\(404 not_found_error`},
		{args: []string{"keys", "create", "-name", "app"}, code: 1, stdout: `fngate: .*\(409 conflict_error`},
		{args: []string{"keys", "create", "-name", "bad name"}, code: 1, stdout: `fngate: name must be .*\(400 invalid_request_error invalid_name, param name\)`},
		{args: []string{"audit", "-target", "$ID"}, stdout: `(?s)TIME\s+ACTOR\s+ROLE\s+ACTION\s+TARGET\s+ID\n.*` + regexp.QuoteMeta(m.actor) + `\s+admin\s+key\.delete\s+$ID\s+aud_.*key\.create\s+$ID`},
		{args: []string{"audit", "-json", "-limit", "2"}, stdout: `^\{`, stderr: ``, json: func(t *testing.T, d map[string]any) {
			data, _ := d["data"].([]any)
			if len(data) != 2 || data[0].(map[string]any)["actor"] != m.actor || d["next"] == "" {
				t.Errorf("audit -json -limit 2: %v", d)
			}
		}},
		{args: []string{"audit", "-limit", "2"}, stdout: `key\.delete`, stderr: `more: fngate audit -after \S+`},
		{args: []string{"audit", "-since", "1h", "-target", "$ID2"}, stdout: `(?s)key\.delete\s+$ID2.*key\.create\s+$ID2`},
		{args: []string{"audit", "-until", "2000-01-01T00:00:00Z"}, stdout: `^TIME\s+ACTOR\s+ROLE\s+ACTION\s+TARGET\s+ID\n$`},
	}, vars)
}

// fngate usage, in both modes: one key's days or months per model with the totals and its
// limits, and every key's totals, with and without -json.
func TestUsageHistory(t *testing.T) {
	for _, m := range []mode{httpMode(t), directMode(t)} {
		t.Run(m.name, func(t *testing.T) { usageSteps(t, m) })
	}
}

func usageSteps(t *testing.T, m mode) {
	today := time.Now().UTC()
	m.addUsage(t, "app", today, "team/chat", counters.Usage{Requests: 3, InputTokens: 300, OutputTokens: 30, CostNanoUSD: 360_000})
	m.addUsage(t, "app", today.AddDate(0, 0, -1), "team/chat", counters.Usage{Requests: 1, InputTokens: 100, OutputTokens: 10, CostNanoUSD: 120_000})
	vars := map[string]string{"TODAY": today.Format(time.DateOnly)}
	m.run(t, []step{
		{args: []string{"usage", "-key", "app"}, stdout: `(?s)^key app, \S+ to $TODAY, per day\nPERIOD\s+MODEL\s+REQUESTS\s+INPUT TOKENS\s+OUTPUT TOKENS\s+COST\n.*$TODAY\s+team/chat\s+3\s+300\s+30\s+\$0\.0004\ntotal\s+4\s+400\s+40\s+\$0\.0005\n\nlimits \(spent from the \w+\):\nSCOPE\s+COUNTER\s+LIMIT\s+USED\s+REMAINING\s+RESETS\n\(key\)\s+usd/day\s+\$10\.0000\s+\$0\.000[04]\s+\$(10\.0000|9\.9996)\s+20\S+\n\(key\)\s+requests/min\s+60\s+`},
		{args: []string{"usage", "-key", "app", "-group", "month", "-from", today.AddDate(0, 0, -1).Format(time.DateOnly)}, stdout: `per month\n.*\n` + today.Format("2006-01") + `\s+team/chat\s+[34]\s+`},
		{args: []string{"usage", "-key", "app", "-json"}, stdout: `^\{`, json: func(t *testing.T, d map[string]any) {
			totals, _ := d["totals"].(map[string]any)
			if d["key"] != "app" || totals["requests"] != 4.0 || d["limits"] == nil {
				t.Errorf("usage -key -json: %v", d)
			}
		}},
		{args: []string{"usage"}, stdout: `KEY\s+NAME\s+TEAM\s+REQUESTS\s+INPUT TOKENS\s+OUTPUT TOKENS\s+COST\napp\s+app\s+-\s+4\s+400\s+40\s+\$0\.0005`},
		{args: []string{"usage", "-key", "app", "-team", "t1"}, code: 2, stdout: `-team, -after and -limit page the keys' totals, without -key`},
		{args: []string{"usage", "-limit", "1"}, stdout: `KEY\s+NAME`},
		{args: []string{"usage", "-json"}, stdout: `^\{`, json: func(t *testing.T, d map[string]any) {
			if data, _ := d["data"].([]any); len(data) == 0 {
				t.Errorf("usage -json: %v", d)
			}
		}},
		{args: []string{"usage", "-key", "app", "-from", "2020-01-01"}, code: 1, stdout: `fngate: .*400 days.*\(400 invalid_request_error invalid_range, param from\)`},
		{args: []string{"usage", "-key", "nosuch"}, code: 1, stdout: `\(404 not_found_error`},
	}, vars)
}

// fngate routes, in both modes: the config's routes with their state, a cool by hand (the
// audit log has it) and a restore, with and without -json.
func TestRoutes(t *testing.T) {
	for _, m := range []mode{httpMode(t), directMode(t)} {
		t.Run(m.name, func(t *testing.T) { routeSteps(t, m) })
	}
}

func routeSteps(t *testing.T, m mode) {
	m.run(t, []step{
		{args: []string{"routes", "list"}, stdout: `(?s)ID\s+MODEL\s+CONNECTION\s+UPSTREAM MODEL\s+STATUS\s+UNTIL\s+REASON\s+SOURCE\s+REMEDIATIONS\n.*m/echo\s+team/chat\s+m\s+echo\s+active`},
		{args: []string{"routes", "cool", "-for", "10m", "-reason", "provider maintenance", "m/error:503"}, stdout: `m/error:503\s+team/chat\s+m\s+error:503\s+cool\w*\s+20\S+\s+provider maintenance\s+manual`},
		{args: []string{"routes", "list", "-json"}, stdout: `^\{`, json: func(t *testing.T, d map[string]any) {
			for _, r := range d["data"].([]any) {
				if r := r.(map[string]any); r["id"] == "m/error:503" && r["source"] == "manual" {
					return
				}
			}
			t.Errorf("routes list -json lacks the cooled route: %v", d)
		}},
		{args: []string{"routes", "restore", "-json", "-reason", "done", "m/error:503"}, stdout: `"status": ?"active"`},
		{args: []string{"routes", "cool", "-json", "-for", "1h", "m/echo"}, stdout: `"source": ?"manual"`, json: func(t *testing.T, d map[string]any) {
			if d["id"] != "m/echo" || d["status"] == "active" {
				t.Errorf("cool -json: %v", d)
			}
		}},
		{args: []string{"routes", "restore", "m/echo"}, stdout: `m/echo\s+team/chat\s+m\s+echo\s+active`},
		{args: []string{"routes", "cool", "nosuch/route"}, code: 1, stdout: `fngate: .*\((400|404) `},
		{args: []string{"audit", "-target", "m/error:503"}, stdout: `(?s)` + regexp.QuoteMeta(m.actor) + `\s+admin\s+route\.restore\s+m/error:503.*route\.cool\s+m/error:503`},
	}, map[string]string{})
}

// The viewer reads and is refused changes with the API's message.
func TestViewerIsRefusedChanges(t *testing.T) {
	a := newAPI(t)
	env := a.env(viewerToken)
	if r := runFngate(t, env, "", "keys", "list"); r.code != 0 || !strings.Contains(r.stdout, "app") {
		t.Fatalf("viewer list: %+v", r)
	}
	for _, args := range [][]string{{"keys", "create", "-name", "x"}, {"routes", "cool", "m/echo"}} {
		r := runFngate(t, env, "", args...)
		if r.code != 1 || !regexp.MustCompile(`^fngate: .*\(403 permission_error`).MatchString(r.stderr) {
			t.Errorf("viewer %v: %+v", args, r)
		}
		noSecret(t, r, viewerToken)
	}
}
