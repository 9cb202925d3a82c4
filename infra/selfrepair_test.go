package infra

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/awslabs/goformation/v7"
	"github.com/awslabs/goformation/v7/cloudformation"
	"github.com/awslabs/goformation/v7/intrinsics"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	"go.yaml.in/yaml/v3"

	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/core/routestate/dynamostore"
	"github.com/fngate/fngate/core/routestate/firestorestore"
	"github.com/fngate/fngate/events/eventarc"
	"github.com/fngate/fngate/events/publish"
	"github.com/fngate/fngate/events/remediation"
)

// Self-repair wiring (docs/remediation.md), checked against the Go code it must match: the
// rule pattern against publish.RulePattern, keys and TTL against the stores, the sweep input
// against the handlers, the alarm against the metric the engine emits.

// The two delivery paths on AWS, and the resources only one of them may have.
var (
	samEventBridgeOnly = []string{"ProviderErrorBus", "ProviderErrorRule", "ProviderErrorRuleInvoke"}
	samLogsOnly        = []string{"ProviderErrorSubscription", "ProviderErrorSubscriptionInvoke"}
	samAlways          = []string{"RouteStateTable", "RemediationLogGroup", "RemediationDeadLetterQueue", "RemediationFunction",
		"SweepSchedule", "SweepScheduleRole", "RemediationActionsAlarm", "GatewayFunction",
		"RemediationDeadLetterQueuePolicy", "ProviderHealthRule", "ProviderHealthRuleInvoke",
		"RemediationUnexplainedBurstsAlarm", "ProviderIncidentBurstsAlarm"}
)

// maxEventAge is REMEDIATION_MAX_EVENT_AGE's default: retrying an event longer is pointless,
// the engine ignores it as stale.
var maxEventAge = int(remediation.DefaultMaxEventAge / time.Second)

// ---- SAM ----

// samView is the template as CloudFormation would deploy it for one set of parameters:
// conditions evaluated, !If resolved, resources whose condition is false gone. A Ref to a
// resource reads "Ref:Name" and a GetAtt "GetAtt:Name.Attr", so wiring can be compared.
type samView struct {
	conds map[string]bool
	res   map[string]any
	out   map[string]any
	tmpl  *cloudformation.Template
}

func samFor(t *testing.T, params map[string]any) *samView {
	t.Helper()
	root := rawTemplate(t)
	// goformation predates InvokedViaFunctionUrl (TestTemplateFunctionURL checks it raw).
	dropInvokedViaFunctionURL(root)
	// goformation would replace a whole resource by its condition's value: take the
	// conditions off here and apply them below.
	conditionOf := map[string]string{}
	for _, section := range []string{"Resources", "Outputs"} {
		s := at(root, section)
		for i := 0; i+1 < len(s.Content); i += 2 {
			if c := at(s.Content[i+1], "Condition"); c != nil {
				conditionOf[section+"/"+s.Content[i].Value] = c.Value
				deleteKey(s.Content[i+1], "Condition")
			}
		}
	}
	data, err := yaml.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	processed, err := intrinsics.ProcessYAML(data, &intrinsics.ProcessorOptions{
		ParameterOverrides: params,
		EvaluateConditions: true,
		IntrinsicHandlerOverrides: map[string]intrinsics.IntrinsicHandler{
			"Ref": func(name string, in, tmpl any) any {
				if v := intrinsics.Ref(name, in, tmpl); v != nil {
					return v
				}
				if s, ok := in.(string); ok && s != "AWS::NoValue" {
					return "Ref:" + s
				}
				return nil
			},
			// ${Resource.Attr} reads GetAtt:Resource.Attr, as a GetAtt does (goformation's own
			// Sub resolves attributes to nothing); parameters and pseudo parameters as before.
			"Fn::Sub": func(name string, in, tmpl any) any {
				if s, ok := in.(string); ok {
					in = subAttr.ReplaceAllString(s, "GetAtt:$1")
				}
				return intrinsics.FnSub(name, in, tmpl)
			},
			"Fn::GetAtt": func(name string, in, tmpl any) any {
				if parts, ok := in.([]any); ok && len(parts) == 2 {
					return fmt.Sprintf("GetAtt:%v.%v", parts[0], parts[1])
				}
				return fmt.Sprint("GetAtt:", in)
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(processed, &doc); err != nil {
		t.Fatal(err)
	}
	v := &samView{conds: map[string]bool{}, res: doc["Resources"].(map[string]any), out: doc["Outputs"].(map[string]any)}
	for name, c := range doc["Conditions"].(map[string]any) {
		b, ok := c.(bool)
		if !ok {
			t.Fatalf("condition %s did not evaluate: %v", name, c)
		}
		v.conds[name] = b
	}
	for key, c := range conditionOf {
		if _, ok := v.conds[c]; !ok {
			t.Fatalf("%s names an undefined condition %s", key, c)
		}
		if !v.conds[c] {
			section, name, _ := strings.Cut(key, "/")
			delete(map[string]map[string]any{"Resources": v.res, "Outputs": v.out}[section], name)
		}
	}
	typed, err := json.Marshal(map[string]any{"AWSTemplateFormatVersion": "2010-09-09", "Transform": doc["Transform"],
		"Resources": v.res, "Outputs": v.out})
	if err != nil {
		t.Fatal(err)
	}
	if v.tmpl, err = goformation.ParseJSONWithOptions(typed, &intrinsics.ProcessorOptions{NoProcess: true}); err != nil {
		t.Fatalf("goformation: %v", err)
	}
	return v
}

var subAttr = regexp.MustCompile(`\$\{([0-9A-Za-z]+\.[0-9A-Za-z.]+)\}`)

func deleteKey(n *yaml.Node, key string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content = slices.Delete(n.Content, i, i+2)
			return
		}
	}
}

// dig walks maps by key and lists by index; nil when the path is missing.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// strs reads a string or a list of strings.
func strs(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, fmt.Sprint(e))
		}
		return out
	}
	return nil
}

// grants flattens IAM statements to "action on resource" lines, sorted.
func grants(statements any) []string {
	var out []string
	for _, st := range statements.([]any) {
		if dig(st, "Effect") != "Allow" {
			out = append(out, fmt.Sprintf("non-Allow statement %v", st))
			continue
		}
		for _, a := range strs(dig(st, "Action")) {
			for _, r := range strs(dig(st, "Resource")) {
				out = append(out, a+" on "+r)
			}
		}
	}
	sort.Strings(out)
	return out
}

// functionGrants is every grant in a SAM function's Policies (statement documents only: a
// managed policy or policy template would be a grant this test cannot see, so it fails).
func functionGrants(t *testing.T, fn any) []string {
	t.Helper()
	var out []string
	for _, p := range dig(fn, "Properties", "Policies").([]any) {
		if p == nil {
			continue // an !If that resolved to AWS::NoValue
		}
		st := dig(p, "Statement")
		if st == nil {
			t.Errorf("a policy that is not a statement document: %v", p)
			continue
		}
		out = append(out, grants(st)...)
	}
	sort.Strings(out)
	return out
}

func sameJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	var g, w any
	switch x := got.(type) {
	case string:
		if err := json.Unmarshal([]byte(x), &g); err != nil {
			t.Errorf("%s is not JSON: %q", what, x)
			return
		}
	default:
		b, _ := json.Marshal(x)
		_ = json.Unmarshal(b, &g)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		gb, _ := json.Marshal(g)
		t.Errorf("%s = %s, want %s", what, gb, want)
	}
}

func testdata(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTemplateSelfRepair(t *testing.T) {
	for _, delivery := range []string{"EventBridge", "CloudWatchLogs"} {
		t.Run(delivery, func(t *testing.T) {
			v := samFor(t, map[string]any{"ErrorDelivery": delivery})
			eventBridge := delivery == "EventBridge"

			// Exactly one delivery path: with both, every error would count twice.
			present, absent := samEventBridgeOnly, samLogsOnly
			if !eventBridge {
				present, absent = absent, present
			}
			for _, name := range append(slices.Clone(samAlways), present...) {
				if v.res[name] == nil {
					t.Errorf("%s is missing with ErrorDelivery=%s", name, delivery)
				}
			}
			for _, name := range absent {
				if v.res[name] != nil {
					t.Errorf("%s exists with ErrorDelivery=%s: both delivery paths would be wired", name, delivery)
				}
			}

			// The gateway: reads the table, publishes to the bus only on the EventBridge path.
			gw := v.res["GatewayFunction"]
			env := dig(gw, "Properties", "Environment", "Variables")
			if got := dig(env, "ROUTE_STATE_TABLE"); got != "Ref:RouteStateTable" {
				t.Errorf("gateway ROUTE_STATE_TABLE = %v", got)
			}
			wantBus := any(nil)
			// The key store's grants come with a public URL only (TestTemplateKeyStore).
			wantGrants := slices.Concat([]string{"dynamodb:Query on GetAtt:RouteStateTable.Arn"}, samCounterGrants, samResponsesGrants, samCacheGrants, samMCPSessionsGrants)
			if eventBridge {
				wantBus = "Ref:ProviderErrorBus"
				wantGrants = append(wantGrants, "events:PutEvents on GetAtt:ProviderErrorBus.Arn")
			}
			if got := dig(env, "PROVIDER_ERROR_BUS"); got != wantBus {
				t.Errorf("gateway PROVIDER_ERROR_BUS = %v, want %v", got, wantBus)
			}
			sort.Strings(wantGrants)
			if got := functionGrants(t, gw); !slices.Equal(got, wantGrants) {
				t.Errorf("gateway grants (no secrets configured) = %q, want %q", got, wantGrants)
			}

			// The remediation function.
			fn, err := v.tmpl.GetServerlessFunctionWithName("RemediationFunction")
			if err != nil {
				t.Fatal(err)
			}
			if fn.AWSCloudFormationMetadata["BuildMethod"] != "makefile" {
				t.Errorf("RemediationFunction BuildMethod = %v, want makefile (make build-RemediationFunction)", fn.AWSCloudFormationMetadata["BuildMethod"])
			}
			if fn.Runtime != nil || fn.Architectures != nil || fn.Handler != nil {
				t.Errorf("RemediationFunction overrides Runtime/Architectures/Handler; keep provided.al2023 arm64 in Globals")
			}
			if fn.Timeout == nil || *fn.Timeout > 60 {
				t.Errorf("RemediationFunction Timeout = %v; a delivery is a few DynamoDB calls, not a 15-minute stream", fn.Timeout)
			}
			renv := fn.Environment.Variables
			if renv["ROUTE_STATE_TABLE"] != "Ref:RouteStateTable" || renv["REMEDIATION_MODE"] != string(remediation.DryRun) {
				t.Errorf("remediation env = %v; want the table and REMEDIATION_MODE dry_run by default", renv)
			}
			// The parameters' defaults are the engine's defaults.
			if renv["REMEDIATION_BURST_ERRORS"] != fmt.Sprint(remediation.DefaultBurstErrors) {
				t.Errorf("REMEDIATION_BURST_ERRORS default %q, the engine's is %d", renv["REMEDIATION_BURST_ERRORS"], remediation.DefaultBurstErrors)
			}
			for k, want := range map[string]time.Duration{"REMEDIATION_BURST_WINDOW": remediation.DefaultBurstWindow, "REMEDIATION_COOLDOWN": remediation.DefaultCooldown} {
				if d, err := time.ParseDuration(renv[k]); err != nil || d != want {
					t.Errorf("%s default %q, the engine's is %s", k, renv[k], want)
				}
			}
			want := []string{
				"dynamodb:DeleteItem on GetAtt:RouteStateTable.Arn", "dynamodb:GetItem on GetAtt:RouteStateTable.Arn",
				"dynamodb:PutItem on GetAtt:RouteStateTable.Arn", "dynamodb:Query on GetAtt:RouteStateTable.Arn",
			}
			if got := functionGrants(t, v.res["RemediationFunction"]); !slices.Equal(got, want) {
				t.Errorf("remediation grants = %q, want exactly %q", got, want)
			}
			eic := fn.EventInvokeConfig
			if eic == nil || eic.MaximumRetryAttempts == nil || *eic.MaximumRetryAttempts != 2 || eic.MaximumEventAgeInSeconds == nil || *eic.MaximumEventAgeInSeconds != maxEventAge {
				t.Errorf("EventInvokeConfig = %+v, want 2 retries within %d s", eic, maxEventAge)
			} else if of := eic.DestinationConfig.OnFailure; of == nil || of.Type == nil || *of.Type != "SQS" || of.Destination != "GetAtt:RemediationDeadLetterQueue.Arn" {
				t.Errorf("EventInvokeConfig OnFailure = %+v, want the dead-letter queue", of)
			}
			if g, f := dig(v.res, "RemediationLogGroup", "Properties", "LogGroupName"), dig(v.res, "RemediationFunction", "Properties", "FunctionName"); g != "/aws/lambda/"+fmt.Sprint(f) {
				t.Errorf("RemediationLogGroup %v is not the log group of function %v", g, f)
			}

			checkTable(t, v)
			checkSweep(t, v)
			checkAlarm(t, v, "dry_run")
			checkHealthRule(t, v, eventBridge)
			checkBurstAlarms(t, v, "dry_run")
			if eventBridge {
				checkRule(t, v)
			} else {
				checkSubscription(t, v)
			}

			for _, o := range []string{"RouteStateTableName", "RemediationDeadLetterQueueUrl", "RemediationDeadLetterQueueArn", "RemediationFunctionArn"} {
				if v.out[o] == nil {
					t.Errorf("no %s output", o)
				}
			}
			if (v.out["ProviderErrorBusName"] != nil) != eventBridge {
				t.Errorf("ProviderErrorBusName output present = %v with ErrorDelivery=%s", v.out["ProviderErrorBusName"] != nil, delivery)
			}
		})
	}

	t.Run("apply", func(t *testing.T) {
		v := samFor(t, map[string]any{"RemediationMode": "apply"})
		if got := dig(v.res, "RemediationFunction", "Properties", "Environment", "Variables", "REMEDIATION_MODE"); got != "apply" {
			t.Errorf("REMEDIATION_MODE = %v with RemediationMode=apply", got)
		}
		checkAlarm(t, v, "apply")
	})
}

func checkTable(t *testing.T, v *samView) {
	t.Helper()
	tbl, err := v.tmpl.GetDynamoDBTableWithName("RouteStateTable")
	if err != nil {
		t.Fatal(err)
	}
	if tbl.BillingMode == nil || *tbl.BillingMode != "PAY_PER_REQUEST" {
		t.Errorf("RouteStateTable BillingMode = %v, want PAY_PER_REQUEST", tbl.BillingMode)
	}
	keys := map[string]string{}
	for _, k := range tbl.KeySchema {
		keys[k.KeyType] = k.AttributeName
	}
	if keys["HASH"] != dynamostore.KeyPartition || keys["RANGE"] != dynamostore.KeySort || len(keys) != 2 {
		t.Errorf("RouteStateTable keys = %v, dynamostore uses %s (hash) and %s (range)", keys, dynamostore.KeyPartition, dynamostore.KeySort)
	}
	for _, a := range tbl.AttributeDefinitions {
		if a.AttributeType != "S" {
			t.Errorf("attribute %s has type %s, want S", a.AttributeName, a.AttributeType)
		}
	}
	if ttl := tbl.TimeToLiveSpecification; ttl == nil || ttl.AttributeName == nil || *ttl.AttributeName != dynamostore.AttrTTL || !ttl.Enabled {
		t.Errorf("RouteStateTable TTL = %+v, want enabled on %s (claims expire through it)", ttl, dynamostore.AttrTTL)
	}
}

func checkSweep(t *testing.T, v *samView) {
	t.Helper()
	s, err := v.tmpl.GetSchedulerScheduleWithName("SweepSchedule")
	if err != nil {
		t.Fatal(err)
	}
	if s.ScheduleExpression != "rate(1 minute)" || s.FlexibleTimeWindow == nil || s.FlexibleTimeWindow.Mode != "OFF" {
		t.Errorf("SweepSchedule = %s, window %+v; want rate(1 minute), OFF", s.ScheduleExpression, s.FlexibleTimeWindow)
	}
	if s.Target == nil || s.Target.Arn != "GetAtt:RemediationFunction.Arn" || s.Target.RoleArn != "GetAtt:SweepScheduleRole.Arn" || s.Target.Input == nil {
		t.Fatalf("SweepSchedule target = %+v", s.Target)
	}
	// The input the eventbridge handler's golden test decodes as a sweep.
	sameJSON(t, "SweepSchedule input", *s.Target.Input, testdata(t, "events/eventbridge/testdata/scheduler_input.json"))
	role := v.res["SweepScheduleRole"]
	if got := dig(role, "Properties", "AssumeRolePolicyDocument", "Statement", 0, "Principal", "Service"); got != "scheduler.amazonaws.com" {
		t.Errorf("SweepScheduleRole trusts %v", got)
	}
	var got []string
	for _, p := range dig(role, "Properties", "Policies").([]any) {
		got = append(got, grants(dig(p, "PolicyDocument", "Statement"))...)
	}
	if want := []string{"lambda:InvokeFunction on GetAtt:RemediationFunction.Arn"}; !slices.Equal(got, want) {
		t.Errorf("SweepScheduleRole grants %q, want %q", got, want)
	}
}

// checkAlarm ties the alarm to the metric the engine emits (its EMF golden line).
func checkAlarm(t *testing.T, v *samView, mode string) {
	t.Helper()
	var emf struct {
		AWS struct {
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name string }
			}
		} `json:"_aws"`
	}
	if err := json.Unmarshal([]byte(testdata(t, "events/remediation/testdata/metric_emf.golden")), &emf); err != nil {
		t.Fatal(err)
	}
	m := emf.AWS.CloudWatchMetrics[0]
	wantFrom := fmt.Sprintf("SELECT SUM(%s) FROM SCHEMA(%s, %s)", m.Metrics[0].Name, m.Namespace, strings.Join(m.Dimensions[0], ", "))
	a, err := v.tmpl.GetCloudWatchAlarmWithName("RemediationActionsAlarm")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Metrics) != 1 || a.Metrics[0].Expression == nil {
		t.Fatalf("RemediationActionsAlarm metrics = %+v, want one Metrics Insights query", a.Metrics)
	}
	q := *a.Metrics[0].Expression
	// A provider incident's own actions are the incident alarm's, not a spike on-call fixes.
	wantWhere := fmt.Sprintf("WHERE Mode = '%s' AND Action != '%s' AND Action != '%s'", mode, remediation.IncidentCool, remediation.IncidentEnable)
	if !strings.HasPrefix(q, wantFrom) || !strings.HasSuffix(q, wantWhere) {
		t.Errorf("alarm query %q, want %s ... %s", q, wantFrom, wantWhere)
	}
	if strings.Contains(q, "SEARCH(") {
		t.Errorf("alarms cannot evaluate SEARCH expressions: %q", q)
	}
	if a.Metrics[0].ReturnData == nil || !*a.Metrics[0].ReturnData || a.Metrics[0].Period == nil || *a.Metrics[0].Period != 300 {
		t.Errorf("alarm query ReturnData/Period = %v/%v, want true/300", a.Metrics[0].ReturnData, a.Metrics[0].Period)
	}
	if a.ComparisonOperator != "GreaterThanThreshold" || a.Threshold == nil || *a.Threshold != 10 {
		t.Errorf("alarm %s %v, want GreaterThanThreshold 10 (the default)", a.ComparisonOperator, a.Threshold)
	}
}

func checkRule(t *testing.T, v *samView) {
	t.Helper()
	r, err := v.tmpl.GetEventsRuleWithName("ProviderErrorRule")
	if err != nil {
		t.Fatal(err)
	}
	// The pattern is the publisher's: the gateway sends exactly what the rule matches.
	sameJSON(t, "ProviderErrorRule.EventPattern", r.EventPattern, publish.RulePattern)
	if r.EventBusName == nil || *r.EventBusName != "Ref:ProviderErrorBus" {
		t.Errorf("ProviderErrorRule is on bus %v, want the gateway's (Ref ProviderErrorBus)", r.EventBusName)
	}
	if len(r.Targets) != 1 {
		t.Fatalf("ProviderErrorRule has %d targets", len(r.Targets))
	}
	tg := r.Targets[0]
	if tg.Arn != "GetAtt:RemediationFunction.Arn" {
		t.Errorf("rule target = %s", tg.Arn)
	}
	if rp := tg.RetryPolicy; rp == nil || rp.MaximumRetryAttempts == nil || *rp.MaximumRetryAttempts < 1 || rp.MaximumEventAgeInSeconds == nil || *rp.MaximumEventAgeInSeconds != maxEventAge {
		t.Errorf("rule target RetryPolicy = %+v, want retries within %d s", rp, maxEventAge)
	}
	if tg.DeadLetterConfig == nil || tg.DeadLetterConfig.Arn == nil || *tg.DeadLetterConfig.Arn != "GetAtt:RemediationDeadLetterQueue.Arn" {
		t.Errorf("rule target DeadLetterConfig = %+v", tg.DeadLetterConfig)
	}
	perm := dig(v.res, "ProviderErrorRuleInvoke", "Properties")
	if dig(perm, "Principal") != "events.amazonaws.com" || dig(perm, "SourceArn") != "GetAtt:ProviderErrorRule.Arn" ||
		dig(perm, "FunctionName") != "Ref:RemediationFunction" || dig(perm, "Action") != "lambda:InvokeFunction" {
		t.Errorf("ProviderErrorRuleInvoke = %v", perm)
	}
	checkDeadLetterConsent(t, v, "ProviderErrorRule")
}

// checkDeadLetterConsent finds the queue policy statement that lets EventBridge send the
// rule's dead letters, and only that rule's.
func checkDeadLetterConsent(t *testing.T, v *samView, rule string) {
	t.Helper()
	qp := dig(v.res, "RemediationDeadLetterQueuePolicy", "Properties")
	if q := strs(dig(qp, "Queues")); !slices.Equal(q, []string{"Ref:RemediationDeadLetterQueue"}) {
		t.Errorf("queue policy is on %v", q)
	}
	for _, st := range dig(qp, "PolicyDocument", "Statement").([]any) {
		if st == nil || dig(st, "Condition", "ArnEquals", "aws:SourceArn") != "GetAtt:"+rule+".Arn" {
			continue
		}
		if got := grants([]any{st}); !slices.Equal(got, []string{"sqs:SendMessage on GetAtt:RemediationDeadLetterQueue.Arn"}) ||
			dig(st, "Principal", "Service") != "events.amazonaws.com" {
			t.Errorf("queue policy statement for %s = %v; want events.amazonaws.com to SendMessage", rule, st)
		}
		return
	}
	t.Errorf("the queue policy has no statement for %s's dead letters", rule)
}

func checkSubscription(t *testing.T, v *samView) {
	t.Helper()
	sub := dig(v.res, "ProviderErrorSubscription", "Properties")
	if dig(sub, "LogGroupName") != "Ref:GatewayLogGroup" || dig(sub, "DestinationArn") != "GetAtt:RemediationFunction.Arn" {
		t.Errorf("subscription = %v", sub)
	}
	if p := fmt.Sprint(dig(sub, "FilterPattern")); p != fmt.Sprintf(`{ $.msg = %q }`, record.MsgProviderError) {
		t.Errorf("subscription FilterPattern %s does not select the gateway's %s lines", p, record.MsgProviderError)
	}
	perm := dig(v.res, "ProviderErrorSubscriptionInvoke", "Properties")
	if dig(perm, "Principal") != "logs.amazonaws.com" || dig(perm, "SourceArn") != "GetAtt:GatewayLogGroup.Arn" || dig(perm, "FunctionName") != "Ref:RemediationFunction" {
		t.Errorf("ProviderErrorSubscriptionInvoke = %v", perm)
	}
}

// TestMakefileRemediationTargets checks the target `sam build` runs for RemediationFunction
// and that `make package-remediation` gives a reproducible zip with bootstrap at its root.
func TestMakefileRemediationTargets(t *testing.T) {
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not on PATH")
	}
	cmd := exec.Command(mk, "-n", "build-RemediationFunction", "ARTIFACTS_DIR=/sam/artifacts")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n build-RemediationFunction: %v\n%s", err, out)
	}
	for _, want := range []string{"GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0", "-tags lambda.norpc", "-trimpath", "-s -w", "./events/eventbridge", "/sam/artifacts/bootstrap"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("build-RemediationFunction lacks %q:\n%s", want, out)
		}
	}
	// With CONFIG the gateway's config goes beside the bootstrap, as for the gateway: the
	// function reads its routes (the inventory provider incidents cool).
	cmd = exec.Command(mk, "-n", "build-RemediationFunction", "ARTIFACTS_DIR=/sam/artifacts", "CONFIG=/src/fngate.yaml")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "cp /src/fngate.yaml /sam/artifacts/fngate.yaml") {
		t.Errorf("build-RemediationFunction CONFIG=... does not pack the config: %v\n%s", err, out)
	}
	if testing.Short() {
		t.Skip("-short: not building the package")
	}
	dir := t.TempDir()
	zipOnce := func() []byte {
		// Built for this machine, without -trimpath: what is under test is the packaging (fixed
		// timestamps, bootstrap at the root), and a host build reuses the test run's compile
		// cache instead of cross-compiling the AWS SDK (the build flags are checked above).
		cmd := exec.Command(mk, "-s", "package-remediation", "BUILD_DIR="+dir, "LAMBDA_ENV=", "LAMBDA_FLAGS=-tags lambda.norpc")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make package-remediation: %v\n%s", err, out)
		}
		b, err := os.ReadFile(filepath.Join(dir, "remediation.zip"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := zipOnce()
	if second := zipOnce(); string(first) != string(second) {
		t.Errorf("two package-remediation runs gave different zips: Terraform would redeploy an unchanged function")
	}
	out, err = exec.Command("unzip", "-Z1", filepath.Join(dir, "remediation.zip")).CombinedOutput()
	if err != nil {
		t.Skipf("unzip: %v", err)
	}
	if got := strings.Fields(string(out)); !slices.Equal(got, []string{"bootstrap"}) {
		t.Errorf("remediation.zip holds %v, want bootstrap at the root and nothing else", got)
	}
}

// ---- Terraform ----

// tfContext evaluates a module's expressions the way a plan would, with every variable at
// its default (or an override; a required one reads "var.<name>") and every resource and data source replaced by an object
// whose attributes read "<type>.<name>.<attribute>", so wiring can be compared. count is
// honoured: a resource counted out is an empty tuple.
func tfContext(t *testing.T, m *module, overrides map[string]cty.Value) *hcl.EvalContext {
	t.Helper()
	vars := map[string]cty.Value{}
	for _, v := range m.all("variable") {
		name := v.Labels[0]
		if o, ok := overrides[name]; ok {
			vars[name] = o
			continue
		}
		// A required variable reads as its own name, so what it reaches can be compared.
		vars[name] = cty.StringVal("var." + name)
		if a, ok := v.Body.Attributes["default"]; ok {
			if val, diags := a.Expr.Value(nil); !diags.HasErrors() {
				vars[name] = val
			}
		}
	}
	for name := range overrides {
		if _, ok := vars[name]; !ok && !strings.HasPrefix(name, "data.") {
			t.Fatalf("no variable %s", name)
		}
	}
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(vars)}, Functions: tfFunctions()}
	locals := map[string]cty.Value{}
	// Locals and counts depend on each other; a few rounds settle a module this size (the
	// regions' locals chain six deep: regions.tf).
	for range 8 {
		ctx.Variables["local"] = cty.ObjectVal(locals)
		resources := map[string]map[string]cty.Value{}
		data := map[string]map[string]cty.Value{}
		for _, b := range m.blocks {
			if (b.Type != "resource" && b.Type != "data") || len(b.Labels) != 2 {
				continue
			}
			val := sentinel(b.Labels[0] + "." + b.Labels[1])
			if c, ok := b.Body.Attributes["count"]; ok {
				n, diags := c.Expr.Value(ctx)
				if diags.HasErrors() || !n.IsKnown() {
					val = cty.DynamicVal
				} else {
					k, _ := n.AsBigFloat().Int64()
					elems := make([]cty.Value, k)
					for i := range elems {
						elems[i] = val
					}
					val = cty.TupleVal(elems)
					if k == 0 {
						val = cty.EmptyTupleVal
					}
				}
			} else if _, ok := b.Body.Attributes["for_each"]; ok {
				val = cty.DynamicVal
			}
			into := resources
			if b.Type == "data" {
				into = data
			}
			if into[b.Labels[0]] == nil {
				into[b.Labels[0]] = map[string]cty.Value{}
			}
			into[b.Labels[0]][b.Labels[1]] = val
		}
		for typ, byName := range resources {
			ctx.Variables[typ] = cty.ObjectVal(byName)
		}
		// An override named data.<type>.<name> stands for that data source (the provider's
		// region, say), which has no value without a provider.
		for name, o := range overrides {
			if parts := strings.Split(name, "."); len(parts) == 3 && parts[0] == "data" && data[parts[1]] != nil {
				data[parts[1]][parts[2]] = o
			}
		}
		dataObj := map[string]cty.Value{}
		for typ, byName := range data {
			dataObj[typ] = cty.ObjectVal(byName)
		}
		ctx.Variables["data"] = cty.ObjectVal(dataObj)
		for _, lb := range m.all("locals") {
			for name, a := range lb.Body.Attributes {
				if v, diags := a.Expr.Value(ctx); !diags.HasErrors() {
					locals[name] = v
				}
			}
		}
	}
	ctx.Variables["local"] = cty.ObjectVal(locals)
	return ctx
}

func sentinel(prefix string) cty.Value {
	attrs := map[string]cty.Value{}
	for _, a := range []string{"name", "arn", "id", "function_name", "email", "member", "writer_identity", "number", "location", "json", "region", "account_id", "secret_id", "version"} {
		attrs[a] = cty.StringVal(prefix + "." + a)
	}
	return cty.ObjectVal(attrs)
}

func tfFunctions() map[string]function.Function {
	str := func(f func(string) string) function.Function {
		return function.New(&function.Spec{
			Params: []function.Parameter{{Name: "s", Type: cty.String}},
			Type:   function.StaticReturnType(cty.String),
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				return cty.StringVal(f(args[0].AsString())), nil
			},
		})
	}
	unknownString := function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String, AllowUnknown: true}},
		Type:   function.StaticReturnType(cty.String),
		Impl:   func([]cty.Value, cty.Type) (cty.Value, error) { return cty.UnknownVal(cty.String), nil },
	})
	return map[string]function.Function{
		"alltrue":      allTrue,
		"base64encode": str(func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }),
		"can":          tryfunc.CanFunc,
		"regex":        stdlib.RegexFunc,
		"basename":     str(path.Base),
		"dirname":      str(path.Dir),
		"concat":       stdlib.ConcatFunc,
		"distinct":     stdlib.DistinctFunc,
		"flatten":      stdlib.FlattenFunc,
		"lookup":       stdlib.LookupFunc,
		"min":          stdlib.MinFunc,
		"split":        stdlib.SplitFunc,
		"startswith": function.New(&function.Spec{
			Params: []function.Parameter{{Name: "s", Type: cty.String}, {Name: "prefix", Type: cty.String}},
			Type:   function.StaticReturnType(cty.Bool),
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				return cty.BoolVal(strings.HasPrefix(args[0].AsString(), args[1].AsString())), nil
			},
		}),
		"trimprefix":       stdlib.TrimPrefixFunc,
		"trimsuffix":       stdlib.TrimSuffixFunc,
		"contains":         stdlib.ContainsFunc,
		"filebase64sha256": unknownString,
		"filemd5":          unknownString,
		"floor":            stdlib.FloorFunc,
		"join":             stdlib.JoinFunc,
		"jsonencode":       stdlib.JSONEncodeFunc,
		"length":           stdlib.LengthFunc,
		"merge":            stdlib.MergeFunc,
		"setunion":         stdlib.SetUnionFunc,
		"toset":            stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
		"tostring":         stdlib.MakeToFunc(cty.String),
		"values":           stdlib.ValuesFunc,
	}
}

// val evaluates an attribute in ctx; it must be known.
func val(t *testing.T, ctx *hcl.EvalContext, b *hclsyntax.Block, name string) cty.Value {
	t.Helper()
	if b == nil {
		t.Fatalf("block missing (looking for %s)", name)
	}
	a, ok := b.Body.Attributes[name]
	if !ok {
		t.Fatalf("%s %v has no %s", b.Type, b.Labels, name)
	}
	v, diags := a.Expr.Value(ctx)
	if diags.HasErrors() {
		t.Fatalf("%s %v: %s: %s", b.Type, b.Labels, name, diags.Error())
	}
	if !v.IsWhollyKnown() {
		t.Fatalf("%s %v: %s is not known at plan time", b.Type, b.Labels, name)
	}
	return v
}

func valString(t *testing.T, ctx *hcl.EvalContext, b *hclsyntax.Block, name string) string {
	t.Helper()
	v := val(t, ctx, b, name)
	if v.Type() == cty.Number {
		return v.AsBigFloat().Text('f', -1)
	}
	if v.Type() == cty.Bool {
		return fmt.Sprint(v.True())
	}
	return v.AsString()
}

func valStrings(t *testing.T, ctx *hcl.EvalContext, b *hclsyntax.Block, name string) []string {
	t.Helper()
	var out []string
	for it := val(t, ctx, b, name).ElementIterator(); it.Next(); {
		_, e := it.Element()
		out = append(out, e.AsString())
	}
	return out
}

func count(t *testing.T, ctx *hcl.EvalContext, b *hclsyntax.Block) int {
	t.Helper()
	if b == nil {
		t.Fatal("block missing")
	}
	if _, ok := b.Body.Attributes["count"]; !ok {
		return 1
	}
	n, _ := val(t, ctx, b, "count").AsBigFloat().Int64()
	return int(n)
}

// policy is an aws_iam_policy_document's statements, static and dynamic, as "action on
// resource" grants, plus the raw statement bodies (with the dynamic iterator bound).
func policy(t *testing.T, ctx *hcl.EvalContext, doc *hclsyntax.Block) (grantList []string, statements []stmt) {
	t.Helper()
	if doc == nil {
		t.Fatal("policy document missing")
	}
	for _, b := range doc.Body.Blocks {
		switch {
		case b.Type == "statement":
			statements = append(statements, stmt{b, ctx})
		case b.Type == "dynamic" && b.Labels[0] == "statement":
			for it := val(t, ctx, b, "for_each").ElementIterator(); it.Next(); {
				k, v := it.Element()
				inner := ctx.NewChild()
				inner.Variables = map[string]cty.Value{"statement": cty.ObjectVal(map[string]cty.Value{"key": k, "value": v})}
				statements = append(statements, stmt{child(b, "content"), inner})
			}
		}
	}
	for _, s := range statements {
		if eff, ok := s.b.Body.Attributes["effect"]; ok {
			if v, _ := eff.Expr.Value(s.ctx); v.AsString() != "Allow" {
				grantList = append(grantList, "non-Allow statement")
			}
		}
		for _, a := range valStrings(t, s.ctx, s.b, "actions") {
			if _, ok := s.b.Body.Attributes["resources"]; !ok {
				grantList = append(grantList, a) // a trust policy
				continue
			}
			for _, r := range valStrings(t, s.ctx, s.b, "resources") {
				grantList = append(grantList, a+" on "+r)
			}
		}
	}
	sort.Strings(grantList)
	return grantList, statements
}

type stmt struct {
	b   *hclsyntax.Block
	ctx *hcl.EvalContext
}

// rolePolicies is every grant of the inline policies on a role. Managed policy attachments
// would be grants this test cannot see, so the module must not have any.
func rolePolicies(t *testing.T, ctx *hcl.EvalContext, m *module, role string) []string {
	t.Helper()
	if len(m.all("resource")) == 0 {
		t.Fatal("no resources")
	}
	var out []string
	for _, b := range m.all("resource") {
		if b.Labels[0] == "aws_iam_role_policy_attachment" || b.Labels[0] == "aws_iam_policy_attachment" {
			t.Errorf("%v attaches a managed policy; grant through inline documents the tests can read", b.Labels)
		}
		if b.Labels[0] != "aws_iam_role_policy" || count(t, ctx, b) == 0 {
			continue
		}
		if !slices.Contains(refs(b, "role"), "aws_iam_role."+role) {
			continue
		}
		trs := b.Body.Attributes["policy"].Expr.Variables()
		if len(trs) != 1 || len(trs[0]) < 3 || trs[0].RootName() != "data" || trs[0][1].(hcl.TraverseAttr).Name != "aws_iam_policy_document" {
			t.Fatalf("%v: the policy must be one aws_iam_policy_document", b.Labels)
		}
		g, _ := policy(t, ctx, m.find("data", "aws_iam_policy_document", trs[0][2].(hcl.TraverseAttr).Name))
		out = append(out, g...)
	}
	sort.Strings(out)
	return out
}

func TestTerraformAWSSelfRepair(t *testing.T) {
	m := parseModule(t, "terraform/aws")
	for _, delivery := range []string{"eventbridge", "cloudwatch_logs"} {
		t.Run(delivery, func(t *testing.T) {
			ctx := tfContext(t, m, map[string]cty.Value{"error_delivery": cty.StringVal(delivery)})
			eventBridge := delivery == "eventbridge"

			// Exactly one delivery path.
			ebOnly := [][2]string{{"aws_cloudwatch_event_bus", "provider_errors"}, {"aws_cloudwatch_event_rule", "provider_errors"},
				{"aws_cloudwatch_event_target", "remediation"}, {"aws_lambda_permission", "events"}}
			logsOnly := [][2]string{{"aws_cloudwatch_log_subscription_filter", "provider_errors"}, {"aws_lambda_permission", "logs"}}
			for _, r := range ebOnly {
				if n := count(t, ctx, m.find("resource", r[0], r[1])); (n == 1) != eventBridge || n > 1 {
					t.Errorf("%s.%s count = %d with error_delivery=%s", r[0], r[1], n, delivery)
				}
			}
			for _, r := range logsOnly {
				if n := count(t, ctx, m.find("resource", r[0], r[1])); (n == 1) == eventBridge || n > 1 {
					t.Errorf("%s.%s count = %d with error_delivery=%s", r[0], r[1], n, delivery)
				}
			}

			// The gateway's environment and grants.
			env := ctx.Variables["local"].GetAttr("environment")
			if got := env.GetAttr("ROUTE_STATE_TABLE").AsString(); got != "aws_dynamodb_table.route_state.name" {
				t.Errorf("gateway ROUTE_STATE_TABLE = %s", got)
			}
			hasBus := env.Type().HasAttribute("PROVIDER_ERROR_BUS")
			if hasBus != eventBridge || (hasBus && env.GetAttr("PROVIDER_ERROR_BUS").AsString() != "aws_cloudwatch_event_bus.provider_errors.name") {
				t.Errorf("gateway PROVIDER_ERROR_BUS present = %v with error_delivery=%s (%#v)", hasBus, delivery, env)
			}
			wantGw := append([]string{"dynamodb:Query on aws_dynamodb_table.route_state.arn", "logs:CreateLogStream on aws_cloudwatch_log_group.gateway.arn:*",
				"logs:PutLogEvents on aws_cloudwatch_log_group.gateway.arn:*"}, slices.Concat(tfCounterGrants, tfResponsesGrants, tfCacheGrants, tfMCPSessionsGrants)...)
			if eventBridge {
				wantGw = append(wantGw, "events:PutEvents on aws_cloudwatch_event_bus.provider_errors.arn")
			}
			sort.Strings(wantGw)
			if got := rolePolicies(t, ctx, m, "gateway"); !slices.Equal(got, wantGw) {
				t.Errorf("gateway grants (no secrets) = %q,\nwant %q", got, wantGw)
			}

			// The remediation function.
			fn := m.find("resource", "aws_lambda_function", "remediation")
			for attr, want := range map[string]string{"runtime": "provided.al2023", "handler": "bootstrap"} {
				if got := valString(t, ctx, fn, attr); got != want {
					t.Errorf("remediation %s = %s, want %s", attr, got, want)
				}
			}
			if got := valStrings(t, ctx, fn, "architectures"); !slices.Equal(got, []string{"arm64"}) {
				t.Errorf("remediation architectures = %v", got)
			}
			if !slices.Contains(refs(fn, "filename"), "var.remediation_package_zip") || !slices.Contains(refs(fn, "source_code_hash"), "var.remediation_package_zip") {
				t.Errorf("the remediation function must deploy var.remediation_package_zip and hash it")
			}
			renv := val(t, ctx, child(fn, "environment"), "variables").AsValueMap()
			wantEnv := map[string]string{
				"ROUTE_STATE_TABLE": "aws_dynamodb_table.route_state.name", "REMEDIATION_MODE": string(remediation.DryRun),
				"REMEDIATION_BURST_ERRORS": fmt.Sprint(remediation.DefaultBurstErrors),
			}
			for k, want := range wantEnv {
				if got, ok := renv[k]; !ok || got.AsString() != want {
					t.Errorf("remediation %s = %v, want %s", k, got, want)
				}
			}
			for k, want := range map[string]time.Duration{"REMEDIATION_BURST_WINDOW": remediation.DefaultBurstWindow, "REMEDIATION_COOLDOWN": remediation.DefaultCooldown} {
				if d, err := time.ParseDuration(renv[k].AsString()); err != nil || d != want {
					t.Errorf("%s default %v, the engine's is %s", k, renv[k], want)
				}
			}
			wantRem := []string{
				"dynamodb:DeleteItem on aws_dynamodb_table.route_state.arn", "dynamodb:GetItem on aws_dynamodb_table.route_state.arn",
				"dynamodb:PutItem on aws_dynamodb_table.route_state.arn", "dynamodb:Query on aws_dynamodb_table.route_state.arn",
				"logs:CreateLogStream on aws_cloudwatch_log_group.remediation.arn:*", "logs:PutLogEvents on aws_cloudwatch_log_group.remediation.arn:*",
				"sqs:SendMessage on aws_sqs_queue.remediation_dlq.arn",
			}
			if got := rolePolicies(t, ctx, m, "remediation"); !slices.Equal(got, wantRem) {
				t.Errorf("remediation grants = %q,\nwant %q", got, wantRem)
			}
			eic := m.find("resource", "aws_lambda_function_event_invoke_config", "remediation")
			if valString(t, ctx, eic, "maximum_retry_attempts") != "2" || valString(t, ctx, eic, "maximum_event_age_in_seconds") != fmt.Sprint(maxEventAge) {
				t.Errorf("event invoke config: want 2 retries within %d s", maxEventAge)
			}
			if got := valString(t, ctx, child(child(eic, "destination_config"), "on_failure"), "destination"); got != "aws_sqs_queue.remediation_dlq.arn" {
				t.Errorf("on-failure destination = %s", got)
			}

			// The table.
			tbl := m.find("resource", "aws_dynamodb_table", "route_state")
			if valString(t, ctx, tbl, "hash_key") != dynamostore.KeyPartition || valString(t, ctx, tbl, "range_key") != dynamostore.KeySort ||
				valString(t, ctx, tbl, "billing_mode") != "PAY_PER_REQUEST" {
				t.Errorf("route_state table keys or billing differ from dynamostore.CreateTable")
			}
			for _, a := range tbl.Body.Blocks {
				if a.Type == "attribute" && valString(t, ctx, a, "type") != "S" {
					t.Errorf("attribute %s is not S", valString(t, ctx, a, "name"))
				}
			}
			if ttl := child(tbl, "ttl"); valString(t, ctx, ttl, "attribute_name") != dynamostore.AttrTTL || valString(t, ctx, ttl, "enabled") != "true" {
				t.Errorf("route_state ttl must be enabled on %s", dynamostore.AttrTTL)
			}

			// The sweep.
			sch := m.find("resource", "aws_scheduler_schedule", "sweep")
			if valString(t, ctx, sch, "schedule_expression") != "rate(1 minute)" || valString(t, ctx, child(sch, "flexible_time_window"), "mode") != "OFF" {
				t.Errorf("sweep schedule must be rate(1 minute) without a window")
			}
			tgt := child(sch, "target")
			if valString(t, ctx, tgt, "arn") != "aws_lambda_function.remediation.arn" || valString(t, ctx, tgt, "role_arn") != "aws_iam_role.sweep.arn" {
				t.Errorf("sweep target/role wrong")
			}
			sameJSON(t, "sweep input", valString(t, ctx, tgt, "input"), testdata(t, "events/eventbridge/testdata/scheduler_input.json"))
			if got := rolePolicies(t, ctx, m, "sweep"); !slices.Equal(got, []string{"lambda:InvokeFunction on aws_lambda_function.remediation.arn"}) {
				t.Errorf("sweep role grants %q", got)
			}
			_, trust := policy(t, ctx, m.find("data", "aws_iam_policy_document", "scheduler_assume"))
			if p := child(trust[0].b, "principals"); valStrings(t, ctx, p, "identifiers")[0] != "scheduler.amazonaws.com" {
				t.Errorf("the sweep role must trust scheduler.amazonaws.com")
			}

			// The alarm's query sums the engine's metric in the current mode.
			q := valString(t, ctx, child(m.find("resource", "aws_cloudwatch_metric_alarm", "remediation_actions"), "metric_query"), "expression")
			if !strings.HasPrefix(q, "SELECT SUM(RemediationActions) FROM SCHEMA(fngate, Action, Mode)") ||
				!strings.HasSuffix(q, "WHERE Mode = 'dry_run' AND Action != 'incident_cool' AND Action != 'incident_enable'") {
				t.Errorf("alarm query %q", q)
			}
			checkTerraformAWSHealth(t, m, ctx, eventBridge)

			if eventBridge {
				rule := m.find("resource", "aws_cloudwatch_event_rule", "provider_errors")
				sameJSON(t, "event_pattern", valString(t, ctx, rule, "event_pattern"), publish.RulePattern)
				if valString(t, ctx, rule, "event_bus_name") != "aws_cloudwatch_event_bus.provider_errors.name" {
					t.Errorf("the rule must be on the gateway's bus")
				}
				tg := m.find("resource", "aws_cloudwatch_event_target", "remediation")
				if valString(t, ctx, tg, "arn") != "aws_lambda_function.remediation.arn" || valString(t, ctx, tg, "rule") != "aws_cloudwatch_event_rule.provider_errors.name" ||
					valString(t, ctx, tg, "event_bus_name") != "aws_cloudwatch_event_bus.provider_errors.name" {
					t.Errorf("rule target wiring wrong")
				}
				rp := child(tg, "retry_policy")
				if valString(t, ctx, rp, "maximum_event_age_in_seconds") != fmt.Sprint(maxEventAge) || valString(t, ctx, rp, "maximum_retry_attempts") == "0" {
					t.Errorf("rule target retry policy: want retries within %d s", maxEventAge)
				}
				if valString(t, ctx, child(tg, "dead_letter_config"), "arn") != "aws_sqs_queue.remediation_dlq.arn" {
					t.Errorf("rule target dead letters must go to the queue")
				}
				perm := m.find("resource", "aws_lambda_permission", "events")
				if valString(t, ctx, perm, "principal") != "events.amazonaws.com" || valString(t, ctx, perm, "source_arn") != "aws_cloudwatch_event_rule.provider_errors.arn" {
					t.Errorf("events permission wrong")
				}
				tfDeadLetterConsent(t, ctx, m, "aws_cloudwatch_event_rule.provider_errors.arn")
			} else {
				sub := m.find("resource", "aws_cloudwatch_log_subscription_filter", "provider_errors")
				if valString(t, ctx, sub, "log_group_name") != "aws_cloudwatch_log_group.gateway.name" || valString(t, ctx, sub, "destination_arn") != "aws_lambda_function.remediation.arn" {
					t.Errorf("subscription wiring wrong")
				}
				if p := valString(t, ctx, sub, "filter_pattern"); p != fmt.Sprintf(`{ $.msg = %q }`, record.MsgProviderError) {
					t.Errorf("filter_pattern %s", p)
				}
				perm := m.find("resource", "aws_lambda_permission", "logs")
				if valString(t, ctx, perm, "principal") != "logs.amazonaws.com" || valString(t, ctx, perm, "source_arn") != "aws_cloudwatch_log_group.gateway.arn:*" {
					t.Errorf("logs permission wrong")
				}
			}
		})
	}

	t.Run("apply", func(t *testing.T) {
		ctx := tfContext(t, m, map[string]cty.Value{"remediation_mode": cty.StringVal("apply")})
		fn := m.find("resource", "aws_lambda_function", "remediation")
		if got := val(t, ctx, child(fn, "environment"), "variables").GetAttr("REMEDIATION_MODE").AsString(); got != "apply" {
			t.Errorf("REMEDIATION_MODE = %s with remediation_mode=apply", got)
		}
	})
	checkVariableValidation(t, m, "remediation_mode", []string{"dry_run", "apply"}, "dry-run")
	checkVariableValidation(t, m, "error_delivery", []string{"eventbridge", "cloudwatch_logs"}, "both")
	for _, o := range []string{"route_state_table_name", "remediation_dead_letter_queue_url", "remediation_dead_letter_queue_arn", "provider_error_bus_name"} {
		if m.find("output", o) == nil {
			t.Errorf("no %s output", o)
		}
	}
}

// checkVariableValidation proves a variable's validation accepts good and refuses bad.
func checkVariableValidation(t *testing.T, m *module, name string, good []string, bad string) {
	t.Helper()
	v := m.find("variable", name)
	vb := child(v, "validation")
	if vb == nil {
		t.Errorf("variable %s has no validation", name)
		return
	}
	for _, s := range append(slices.Clone(good), bad) {
		ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{name: cty.StringVal(s)})}, Functions: tfFunctions()}
		ok, diags := vb.Body.Attributes["condition"].Expr.Value(ctx)
		if diags.HasErrors() {
			t.Fatalf("%s validation: %s", name, diags.Error())
		}
		if ok.True() != slices.Contains(good, s) {
			t.Errorf("%s validation accepts %q: %v", name, s, ok.True())
		}
	}
}

func TestTerraformGCPSelfRepair(t *testing.T) {
	m := parseModule(t, "terraform/gcp")
	ctx := tfContext(t, m, nil)

	// Firestore: a native database (or the one named), the claims TTL on the stores' field.
	db := m.find("resource", "google_firestore_database", "route_state")
	if count(t, ctx, db) != 1 || valString(t, ctx, db, "type") != "FIRESTORE_NATIVE" {
		t.Errorf("without firestore_database the module must create a native database")
	}
	if n := count(t, tfContext(t, m, map[string]cty.Value{"firestore_database": cty.StringVal("existing")}), db); n != 0 {
		t.Errorf("with firestore_database set the module still creates one")
	}
	ttl := m.find("resource", "google_firestore_field", "claims_ttl")
	if got := valString(t, ctx, ttl, "collection"); got != firestorestore.DefaultPrefix+firestorestore.Claims {
		t.Errorf("TTL policy on collection %s, the claims live in %s", got, firestorestore.DefaultPrefix+firestorestore.Claims)
	}
	if valString(t, ctx, ttl, "field") != firestorestore.TTLField || child(ttl, "ttl_config") == nil {
		t.Errorf("TTL policy must be on field %s", firestorestore.TTLField)
	}
	if valString(t, ctx, ttl, "database") != "google_firestore_database.route_state.name" {
		t.Errorf("TTL policy must be on the route-state database")
	}

	// Both functions find the same database.
	wantEnv := map[string]string{"ROUTE_STATE_PROJECT": "var.project_id", "ROUTE_STATE_DATABASE": "google_firestore_database.route_state.name", "ROUTE_STATE_PREFIX": firestorestore.DefaultPrefix}
	gwEnv := ctx.Variables["local"].GetAttr("environment")
	rem := m.find("resource", "google_cloudfunctions2_function", "remediation")
	remEnv := val(t, ctx, child(rem, "service_config"), "environment_variables")
	for _, env := range []cty.Value{gwEnv, remEnv} {
		for k, want := range wantEnv {
			if !env.Type().HasAttribute(k) {
				t.Errorf("a function lacks %s", k)
			} else if got := env.GetAttr(k); !got.IsKnown() || got.AsString() != want {
				t.Errorf("%s = %#v, want %s", k, got, want)
			}
		}
	}
	if got := remEnv.GetAttr("REMEDIATION_MODE").AsString(); got != string(remediation.DryRun) {
		t.Errorf("REMEDIATION_MODE default %s", got)
	}

	// The remediation function and its trigger.
	build := child(rem, "build_config")
	if valString(t, ctx, build, "runtime") != "go125" || valString(t, ctx, build, "entry_point") != eventarc.EntryPoint {
		t.Errorf("remediation build: want go125 and entry point %s (events/eventarc registers it)", eventarc.EntryPoint)
	}
	if !slices.Contains(refs(child(child(build, "source"), "storage_source"), "object"), "google_storage_bucket_object.remediation_source") ||
		!slices.Contains(refs(m.find("resource", "google_storage_bucket_object", "remediation_source"), "source"), "var.remediation_source_zip") {
		t.Errorf("the remediation build must use var.remediation_source_zip")
	}
	trig := child(rem, "event_trigger")
	if valString(t, ctx, trig, "event_type") != eventarc.EventType || valString(t, ctx, trig, "retry_policy") != "RETRY_POLICY_RETRY" ||
		valString(t, ctx, trig, "pubsub_topic") != "google_pubsub_topic.provider_errors.id" ||
		valString(t, ctx, trig, "service_account_email") != "google_service_account.trigger.email" {
		t.Errorf("remediation trigger: want %s on the topic, retried, as the trigger account", eventarc.EventType)
	}
	if valString(t, ctx, child(rem, "service_config"), "service_account_email") != "google_service_account.remediation.email" {
		t.Errorf("the remediation function must run as its own account")
	}

	// The sink: the gateway's service, the classes the AWS rule matches, published to the topic.
	sink := m.find("resource", "google_logging_project_sink", "provider_errors")
	filter := valString(t, ctx, sink, "filter")
	var pattern struct {
		Detail struct {
			ErrorClass []string `json:"error_class"`
		} `json:"detail"`
	}
	if err := json.Unmarshal([]byte(publish.RulePattern), &pattern); err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(pattern.Detail.ErrorClass))
	for i, c := range pattern.Detail.ErrorClass {
		quoted[i] = fmt.Sprintf("%q", c)
	}
	for _, want := range []string{`resource.type="cloud_run_revision"`, `resource.labels.service_name="google_cloudfunctions2_function.gateway.name"`,
		"jsonPayload.error_class=(" + strings.Join(quoted, " OR ") + ")"} {
		if !strings.Contains(filter, want) {
			t.Errorf("sink filter %s lacks %s", filter, want)
		}
	}
	if valString(t, ctx, sink, "destination") != "pubsub.googleapis.com/google_pubsub_topic.provider_errors.id" || valString(t, ctx, sink, "unique_writer_identity") != "true" {
		t.Errorf("the sink must publish to the topic with its own writer identity")
	}
	pub := m.find("resource", "google_pubsub_topic_iam_member", "sink_publisher")
	if valString(t, ctx, pub, "role") != "roles/pubsub.publisher" || valString(t, ctx, pub, "member") != "google_logging_project_sink.provider_errors.writer_identity" ||
		valString(t, ctx, pub, "topic") != "google_pubsub_topic.provider_errors.name" {
		t.Errorf("the sink's writer identity must publish to the topic")
	}
	if m.find("resource", "google_pubsub_topic", "dead_letter") == nil || m.find("resource", "google_pubsub_subscription", "dead_letter") == nil {
		t.Errorf("no dead-letter topic with a subscription that keeps its messages")
	}
	dlp := m.find("resource", "google_pubsub_topic_iam_member", "dead_letter_publisher")
	if valString(t, ctx, dlp, "role") != "roles/pubsub.publisher" || !strings.Contains(valString(t, ctx, dlp, "member"), "@gcp-sa-pubsub.iam.gserviceaccount.com") {
		t.Errorf("Pub/Sub's service agent must be able to publish dead letters")
	}

	// The sweep: the message the eventarc handler decodes as a sweep, every minute.
	job := m.find("resource", "google_cloud_scheduler_job", "sweep")
	if valString(t, ctx, job, "schedule") != "* * * * *" {
		t.Errorf("sweep schedule %s", valString(t, ctx, job, "schedule"))
	}
	pt := child(job, "pubsub_target")
	if valString(t, ctx, pt, "topic_name") != "google_pubsub_topic.provider_errors.id" {
		t.Errorf("the sweep must publish to the trigger's topic")
	}
	data, err := base64.StdEncoding.DecodeString(valString(t, ctx, pt, "data"))
	if err != nil {
		t.Fatal(err)
	}
	if in, err := eventarc.Decode(messagePublished(t, data)); err != nil || !in.Sweep {
		t.Errorf("the sweep message %s decodes as %+v, %v; want a sweep", data, in, err)
	}

	// The metric and alert: the engine's Cloud Logging line, labels action and mode.
	metric := m.find("resource", "google_logging_metric", "remediation_actions")
	var golden map[string]any
	if err := json.Unmarshal([]byte(testdata(t, "events/remediation/testdata/metric_cloudlogging.golden")), &golden); err != nil {
		t.Fatal(err)
	}
	mf := valString(t, ctx, metric, "filter")
	if !strings.Contains(mf, fmt.Sprintf("jsonPayload.metric=%q", golden["metric"])) || !strings.Contains(mf, "google_cloudfunctions2_function.remediation.name") {
		t.Errorf("metric filter %s: want the remediation function's metric=%v lines", mf, golden["metric"])
	}
	ext := val(t, ctx, metric, "label_extractors").AsValueMap()
	for _, l := range []string{"action", "mode"} {
		if _, ok := golden[l]; !ok {
			t.Fatalf("the golden metric line has no %s", l)
		}
		if e, ok := ext[l]; !ok || e.AsString() != "EXTRACT(jsonPayload."+l+")" {
			t.Errorf("label %s extractor %v", l, e)
		}
	}
	alert := child(child(m.find("resource", "google_monitoring_alert_policy", "remediation_actions"), "conditions"), "condition_threshold")
	if f := valString(t, ctx, alert, "filter"); !strings.Contains(f, "logging.googleapis.com/user/google_logging_metric.remediation_actions.name") || !strings.Contains(f, `metric.label.mode = "dry_run"`) ||
		!strings.HasSuffix(f, `AND metric.label.action != "incident_cool" AND metric.label.action != "incident_enable"`) {
		t.Errorf("alert filter %s", f)
	}
	checkTerraformGCPHealth(t, m, ctx)

	// IAM, per docs/remediation.md; Firestore roles limited to the route-state database.
	for name, want := range map[string][2]string{
		"remediation_route_state": {"roles/datastore.user", "google_service_account.remediation.member"},
		"gateway_route_state":     {"roles/datastore.viewer", "google_service_account.gateway.member"},
		"trigger_event_receiver":  {"roles/eventarc.eventReceiver", "google_service_account.trigger.member"},
	} {
		b := m.find("resource", "google_project_iam_member", name)
		if valString(t, ctx, b, "role") != want[0] || valString(t, ctx, b, "member") != want[1] {
			t.Errorf("%s: want %s for %s", name, want[0], want[1])
		}
		if strings.HasPrefix(want[0], "roles/datastore.") {
			if c := child(b, "condition"); c == nil || !strings.Contains(valString(t, ctx, c, "expression"), "/databases/google_firestore_database.route_state.name") {
				t.Errorf("%s must be conditioned on the route-state database", name)
			}
		}
	}
	inv := m.find("resource", "google_cloud_run_service_iam_member", "trigger_invoker")
	if valString(t, ctx, inv, "role") != "roles/run.invoker" || valString(t, ctx, inv, "service") != "google_cloudfunctions2_function.remediation.name" ||
		valString(t, ctx, inv, "member") != "google_service_account.trigger.member" {
		t.Errorf("the trigger account must invoke the remediation function")
	}
	for _, b := range m.all("resource") {
		if strings.Contains(b.Labels[0], "iam_member") || strings.Contains(b.Labels[0], "iam_binding") || strings.Contains(b.Labels[0], "iam_policy") {
			if _, ok := b.Body.Attributes["role"]; !ok {
				continue
			}
			if r := valString(t, ctx, b, "role"); strings.Contains(r, "admin") || strings.Contains(r, "owner") || strings.Contains(r, "editor") {
				t.Errorf("%v grants %s", b.Labels, r)
			}
		}
	}
	checkVariableValidation(t, m, "remediation_mode", []string{"dry_run", "apply"}, "dryrun")
	// Service account ids are 6-30 characters: every one must fit with the longest valid name.
	checkVariableValidation(t, m, "name", []string{"fngate", "fngate-prod-eu-west4"}, "fngate-production-europe")
	longest := tfContext(t, m, map[string]cty.Value{"name": cty.StringVal("fngate-prod-eu-west4")})
	for _, b := range m.all("resource") {
		if b.Labels[0] == "google_service_account" {
			if id := valString(t, longest, b, "account_id"); len(id) > 30 {
				t.Errorf("service account id %s is longer than 30 characters", id)
			}
		}
	}
	for _, o := range []string{"route_state_database", "remediation_function_name", "dead_letter_topic", "dead_letter_setup"} {
		if m.find("output", o) == nil {
			t.Errorf("no %s output", o)
		}
	}
}

// messagePublished wraps data the way Eventarc delivers a Pub/Sub message.
func messagePublished(t *testing.T, data []byte) event.Event {
	t.Helper()
	e := event.New()
	e.SetID("1")
	e.SetType(eventarc.EventType)
	e.SetSource("//pubsub.googleapis.com/projects/p/topics/t")
	body, _ := json.Marshal(map[string]any{"message": map[string]any{"data": data, "messageId": "1"}})
	if err := e.SetData(event.ApplicationJSON, body); err != nil {
		t.Fatal(err)
	}
	return e
}

// samTranslate is a small program run with the Python that has cfn-lint: it expands the
// template with the SAM translator cfn-lint bundles (offline) and prints every IAM role's
// grants, as "[condition ]action on resource", and every resource's type.
const samTranslate = `
import json, sys
from cfnlint.decode import decode
from cfnlint.template.transforms._sam import Transform

def ref(v):
    if isinstance(v, dict) and isinstance(v.get("Fn::Sub"), str):
        return "Sub:" + v["Fn::Sub"]
    if isinstance(v, dict) and "Fn::GetAtt" in v:
        return "GetAtt:" + ".".join(v["Fn::GetAtt"])
    if isinstance(v, dict) and "Ref" in v:
        return "Ref:" + v["Ref"]
    return v if isinstance(v, str) else json.dumps(v, sort_keys=True, default=str)

def listify(v):
    return v if isinstance(v, list) else [v]

tpl, errs = decode(sys.argv[1])
if errs:
    sys.exit("decode: %s" % errs)
t = Transform(sys.argv[1], tpl, "us-east-1")
if t.transform_template():
    sys.exit("transform failed")
res = t._template["Resources"]
out = {"types": {k: v["Type"] for k, v in res.items()}, "roles": {}}
for name, r in res.items():
    if r["Type"] != "AWS::IAM::Role":
        continue
    props = r["Properties"]
    grants = ["managed " + ref(m) for m in props.get("ManagedPolicyArns", [])]
    for p in props.get("Policies", []):
        cond = ""
        if "Fn::If" in p:
            cond, p = p["Fn::If"][0] + " ", p["Fn::If"][1]
        for st in listify(p["PolicyDocument"]["Statement"]):
            for a in listify(st["Action"]):
                for rs in listify(st["Resource"]):
                    grants.append("%s%s %s on %s" % (cond, st["Effect"], a, ref(rs)))
    out["roles"][name] = sorted(grants)
print(json.dumps(out))
`

// TestTemplateTranslatedRoles checks the roles SAM actually creates: the translator adds
// grants the template does not show (the basic execution role, the on-failure destination,
// and for event sources their permissions), so least privilege is checked after it.
func TestTemplateTranslatedRoles(t *testing.T) {
	if _, err := exec.LookPath("cfn-lint"); err != nil {
		t.Skip("cfn-lint is not on PATH: skipping the SAM translation check")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH")
	}
	cmd := exec.Command(py, "-c", samTranslate, templatePath)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		if strings.Contains(stderr, "ModuleNotFoundError") {
			t.Skipf("python3 cannot import cfn-lint's SAM transform: %s", stderr)
		}
		t.Fatalf("SAM translation: %v\n%s", err, stderr)
	}
	var got struct {
		Types map[string]string
		Roles map[string][]string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	basic := "managed arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
	want := map[string][]string{
		"RemediationFunctionRole": {
			"Allow dynamodb:DeleteItem on GetAtt:RouteStateTable.Arn", "Allow dynamodb:GetItem on GetAtt:RouteStateTable.Arn",
			"Allow dynamodb:PutItem on GetAtt:RouteStateTable.Arn", "Allow dynamodb:Query on GetAtt:RouteStateTable.Arn",
			"Allow sqs:SendMessage on GetAtt:RemediationDeadLetterQueue.Arn", basic,
		},
		"GatewayFunctionRole": {
			"Allow dynamodb:Query on GetAtt:RouteStateTable.Arn", "HasKmsKey Allow kms:Decrypt on Ref:SecretsKmsKeyArn",
			"HasCollectorLayer Allow xray:PutTelemetryRecords on *", "HasCollectorLayer Allow xray:PutTraceSegments on *",
			"Allow dynamodb:GetItem on GetAtt:CountersTable.Arn", "Allow dynamodb:UpdateItem on GetAtt:CountersTable.Arn",
			"HasSecrets Allow secretsmanager:GetSecretValue on Ref:SecretArns",
			"HasGuardrails Allow bedrock:ApplyGuardrail on Ref:GuardrailArns",
			"UseEventBridge Allow events:PutEvents on GetAtt:ProviderErrorBus.Arn", basic,
			"Allow dynamodb:DeleteItem on GetAtt:ResponsesTable.Arn", "Allow dynamodb:GetItem on GetAtt:ResponsesTable.Arn",
			"Allow dynamodb:PutItem on GetAtt:ResponsesTable.Arn",
			"Allow dynamodb:GetItem on GetAtt:CacheTable.Arn", "Allow dynamodb:PutItem on GetAtt:CacheTable.Arn",
			"PublicUrl Allow dynamodb:GetItem on GetAtt:KeysTable.Arn", "PublicUrl Allow dynamodb:Query on GetAtt:KeysTable.Arn",
			"PublicUrl Allow dynamodb:Query on Sub:${KeysTable.Arn}/index/*",
			"HasMcpSecrets Allow secretsmanager:GetSecretValue on Ref:McpSecretArns",
			"HasMcpSessions Allow dynamodb:DeleteItem on GetAtt:McpSessionsTable.Arn", "HasMcpSessions Allow dynamodb:GetItem on GetAtt:McpSessionsTable.Arn",
			"HasMcpSessions Allow dynamodb:PutItem on GetAtt:McpSessionsTable.Arn",
		},
		"SweepScheduleRole":        {"Allow lambda:InvokeFunction on GetAtt:RemediationFunction.Arn"},
		"ControlPlaneFunctionRole": translatedControlPlaneRole(basic),
	}
	for role, w := range want {
		sort.Strings(w)
		if !slices.Equal(got.Roles[role], w) {
			t.Errorf("%s after SAM translation:\n got %q\nwant %q", role, got.Roles[role], w)
		}
	}
	for role := range got.Roles {
		if _, ok := want[role]; !ok {
			t.Errorf("SAM translation created an unexpected role %s: %q", role, got.Roles[role])
		}
	}
	// Invoke permissions come only from the template's own, conditional resources.
	for name, typ := range got.Types {
		if typ == "AWS::Lambda::Permission" && !slices.Contains([]string{"GatewayUrlPublicInvokeUrl", "GatewayUrlPublicInvokeFunction",
			"ProviderErrorRuleInvoke", "ProviderErrorSubscriptionInvoke", "ProviderHealthRuleInvoke",
			"ControlPlaneUrlPublicInvokeUrl", "ControlPlaneUrlPublicInvokeFunction"}, name) {
			t.Errorf("SAM translation created a Lambda permission %s", name)
		}
	}
}
