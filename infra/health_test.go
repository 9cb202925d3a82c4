package infra

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/fngate/fngate/events/remediation"
)

// Provider health wiring (docs/remediation.md, "Provider incidents"), checked against the Go
// code it must match: the AWS Health rule against remediation.AWSHealthRulePattern and the
// recorded AWS Health events the handler's tests decode, the Service Health sink against
// remediation.ServiceHealthLogFilter, the burst alarms against the metric lines the engine
// emits.

// matches evaluates the subset of EventBridge's pattern language the health rule uses:
// nested objects whose leaves are lists of exact values.
func matches(pattern, event any) bool {
	switch p := pattern.(type) {
	case map[string]any:
		e, ok := event.(map[string]any)
		if !ok {
			return false
		}
		for k, sub := range p {
			if !matches(sub, e[k]) {
				return false
			}
		}
		return true
	case []any:
		for _, want := range p {
			if reflect.DeepEqual(want, event) {
				return true
			}
		}
	}
	return false
}

func readJSON(t *testing.T, rel string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(testdata(t, rel)), &v); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return v
}

// TestAWSHealthRulePatternMatchesTheRecordedEvents: the rule sends the handler the incidents
// its tests decode, and not the scheduled change it would skip anyway.
func TestAWSHealthRulePatternMatchesTheRecordedEvents(t *testing.T) {
	var pattern any
	if err := json.Unmarshal([]byte(remediation.AWSHealthRulePattern), &pattern); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"aws_health_bedrock_open.json": true, "aws_health_bedrock_closed.json": true, "aws_health_scheduled_change.json": false,
	} {
		if got := matches(pattern, readJSON(t, filepath.Join("events/eventbridge/testdata", name))); got != want {
			t.Errorf("the AWS Health rule matches %s: %v, want %v", name, got, want)
		}
	}
}

func checkHealthRule(t *testing.T, v *samView, eventBridge bool) {
	t.Helper()
	r, err := v.tmpl.GetEventsRuleWithName("ProviderHealthRule")
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "ProviderHealthRule.EventPattern", r.EventPattern, remediation.AWSHealthRulePattern)
	// AWS Health delivers to the default bus; a rule on another bus would hear nothing.
	if r.EventBusName != nil {
		t.Errorf("ProviderHealthRule is on bus %v; AWS Health events arrive on the default bus", *r.EventBusName)
	}
	if len(r.Targets) != 1 || r.Targets[0].Arn != "GetAtt:RemediationFunction.Arn" {
		t.Fatalf("ProviderHealthRule targets = %+v", r.Targets)
	}
	tg := r.Targets[0]
	if rp := tg.RetryPolicy; rp == nil || rp.MaximumEventAgeInSeconds == nil || *rp.MaximumEventAgeInSeconds != maxEventAge || rp.MaximumRetryAttempts == nil || *rp.MaximumRetryAttempts < 1 {
		t.Errorf("ProviderHealthRule target RetryPolicy = %+v, want retries within %d s", rp, maxEventAge)
	}
	if tg.DeadLetterConfig == nil || tg.DeadLetterConfig.Arn == nil || *tg.DeadLetterConfig.Arn != "GetAtt:RemediationDeadLetterQueue.Arn" {
		t.Errorf("ProviderHealthRule target DeadLetterConfig = %+v", tg.DeadLetterConfig)
	}
	perm := dig(v.res, "ProviderHealthRuleInvoke", "Properties")
	if dig(perm, "Principal") != "events.amazonaws.com" || dig(perm, "SourceArn") != "GetAtt:ProviderHealthRule.Arn" ||
		dig(perm, "FunctionName") != "Ref:RemediationFunction" || dig(perm, "Action") != "lambda:InvokeFunction" {
		t.Errorf("ProviderHealthRuleInvoke = %v", perm)
	}
	checkDeadLetterConsent(t, v, "ProviderHealthRule")
	statements := 0
	for _, st := range dig(v.res, "RemediationDeadLetterQueuePolicy", "Properties", "PolicyDocument", "Statement").([]any) {
		if st != nil {
			statements++
		}
	}
	if want := map[bool]int{true: 2, false: 1}[eventBridge]; statements != want {
		t.Errorf("queue policy has %d statements with EventBridge delivery %v, want %d (one per rule)", statements, eventBridge, want)
	}

	// The function reads the gateway's config for its route inventory, as the gateway does.
	renv := dig(v.res, "RemediationFunction", "Properties", "Environment", "Variables").(map[string]any)
	if d, err := time.ParseDuration(fmt.Sprint(renv["REMEDIATION_INCIDENT_COOLDOWN"])); err != nil || d != remediation.DefaultIncidentCooldown {
		t.Errorf("REMEDIATION_INCIDENT_COOLDOWN default %v, the engine's is %s", renv["REMEDIATION_INCIDENT_COOLDOWN"], remediation.DefaultIncidentCooldown)
	}
	genv := dig(v.res, "GatewayFunction", "Properties", "Environment", "Variables").(map[string]any)
	for _, k := range []string{"FNGATE_CONFIG_YAML", "FNGATE_CONFIG"} {
		if !reflect.DeepEqual(renv[k], genv[k]) {
			t.Errorf("remediation %s = %v, the gateway's %v: the inventory must be the gateway's routes", k, renv[k], genv[k])
		}
	}
}

// checkBurstAlarms ties the two burst alarms to the metric line the engine emits (its EMF
// golden) and to the correlation values, and checks who each notifies.
func checkBurstAlarms(t *testing.T, v *samView, mode string) {
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
	lines := strings.Split(strings.TrimSpace(testdata(t, "events/remediation/testdata/metric_bursts_emf.golden")), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &emf); err != nil {
		t.Fatal(err)
	}
	m := emf.AWS.CloudWatchMetrics[0]
	from := fmt.Sprintf("SELECT SUM(%s) FROM SCHEMA(%s, %s)", m.Metrics[0].Name, m.Namespace, strings.Join(m.Dimensions[0], ", "))
	for name, c := range map[string]struct{ correlation, topic string }{
		"RemediationUnexplainedBurstsAlarm": {remediation.CorrelatedNone, "AlarmTopicArn"},
		"ProviderIncidentBurstsAlarm":       {remediation.CorrelatedIncident, "IncidentAlarmTopicArn"},
	} {
		a, err := v.tmpl.GetCloudWatchAlarmWithName(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Metrics) != 1 || a.Metrics[0].Expression == nil {
			t.Fatalf("%s metrics = %+v", name, a.Metrics)
		}
		want := fmt.Sprintf("%s WHERE Mode = '%s' AND Correlation = '%s'", from, mode, c.correlation)
		if q := *a.Metrics[0].Expression; q != want {
			t.Errorf("%s query %q, want %q", name, q, want)
		}
		if a.ComparisonOperator != "GreaterThanThreshold" || a.TreatMissingData == nil || *a.TreatMissingData != "notBreaching" {
			t.Errorf("%s: %s, missing data %v", name, a.ComparisonOperator, a.TreatMissingData)
		}
		if acts := dig(v.res, name, "Properties", "AlarmActions"); acts != nil {
			t.Errorf("%s notifies %v with no %s given", name, acts, c.topic)
		}
	}
	v2 := samFor(t, map[string]any{"AlarmTopicArn": "arn:aws:sns:us-east-1:123456789012:oncall", "IncidentAlarmTopicArn": "arn:aws:sns:us-east-1:123456789012:fyi"})
	if got := strs(dig(v2.res, "RemediationUnexplainedBurstsAlarm", "Properties", "AlarmActions")); len(got) != 1 || !strings.HasSuffix(got[0], ":oncall") {
		t.Errorf("the unexplained-bursts alarm pages %v, want on-call's topic", got)
	}
	if got := strs(dig(v2.res, "ProviderIncidentBurstsAlarm", "Properties", "AlarmActions")); len(got) != 1 || !strings.HasSuffix(got[0], ":fyi") {
		t.Errorf("the provider-incident alarm notifies %v, want the incident topic", got)
	}
}

// tfDeadLetterConsent finds the queue policy statement that lets EventBridge send one rule's
// dead letters.
func tfDeadLetterConsent(t *testing.T, ctx *hcl.EvalContext, m *module, ruleArn string) {
	t.Helper()
	_, statements := policy(t, ctx, m.find("data", "aws_iam_policy_document", "remediation_dlq"))
	for _, st := range statements {
		cond := child(st.b, "condition")
		if valStrings(t, st.ctx, cond, "values")[0] != ruleArn {
			continue
		}
		if valStrings(t, st.ctx, st.b, "actions")[0] != "sqs:SendMessage" || valStrings(t, st.ctx, st.b, "resources")[0] != "aws_sqs_queue.remediation_dlq.arn" ||
			valStrings(t, st.ctx, child(st.b, "principals"), "identifiers")[0] != "events.amazonaws.com" || valString(t, st.ctx, cond, "test") != "ArnEquals" {
			t.Errorf("queue policy statement for %s: want events.amazonaws.com to SendMessage for this rule only", ruleArn)
		}
		return
	}
	t.Errorf("the queue policy has no statement for %s", ruleArn)
}

func checkTerraformAWSHealth(t *testing.T, m *module, ctx *hcl.EvalContext, eventBridge bool) {
	t.Helper()
	rule := m.find("resource", "aws_cloudwatch_event_rule", "provider_health")
	sameJSON(t, "provider_health event_pattern", valString(t, ctx, rule, "event_pattern"), remediation.AWSHealthRulePattern)
	if _, onBus := rule.Body.Attributes["event_bus_name"]; onBus {
		t.Errorf("the AWS Health rule must be on the default bus, where AWS Health delivers")
	}
	tg := m.find("resource", "aws_cloudwatch_event_target", "provider_health")
	if valString(t, ctx, tg, "arn") != "aws_lambda_function.remediation.arn" || valString(t, ctx, tg, "rule") != "aws_cloudwatch_event_rule.provider_health.name" {
		t.Errorf("AWS Health rule target wiring wrong")
	}
	if rp := child(tg, "retry_policy"); valString(t, ctx, rp, "maximum_event_age_in_seconds") != fmt.Sprint(maxEventAge) {
		t.Errorf("AWS Health target retry policy: want retries within %d s", maxEventAge)
	}
	if valString(t, ctx, child(tg, "dead_letter_config"), "arn") != "aws_sqs_queue.remediation_dlq.arn" {
		t.Errorf("AWS Health target dead letters must go to the queue")
	}
	perm := m.find("resource", "aws_lambda_permission", "provider_health")
	if valString(t, ctx, perm, "principal") != "events.amazonaws.com" || valString(t, ctx, perm, "source_arn") != "aws_cloudwatch_event_rule.provider_health.arn" ||
		valString(t, ctx, perm, "action") != "lambda:InvokeFunction" {
		t.Errorf("AWS Health permission wrong")
	}
	tfDeadLetterConsent(t, ctx, m, "aws_cloudwatch_event_rule.provider_health.arn")
	if g, _ := policy(t, ctx, m.find("data", "aws_iam_policy_document", "remediation_dlq")); len(g) != map[bool]int{true: 2, false: 1}[eventBridge] {
		t.Errorf("queue policy grants %q with EventBridge delivery %v: want one statement per rule", g, eventBridge)
	}

	fn := m.find("resource", "aws_lambda_function", "remediation")
	renv := val(t, ctx, child(fn, "environment"), "variables").AsValueMap()
	if d, err := time.ParseDuration(renv["REMEDIATION_INCIDENT_COOLDOWN"].AsString()); err != nil || d != remediation.DefaultIncidentCooldown {
		t.Errorf("REMEDIATION_INCIDENT_COOLDOWN default %v, the engine's is %s", renv["REMEDIATION_INCIDENT_COOLDOWN"], remediation.DefaultIncidentCooldown)
	}
	// Given a config, the remediation function gets the gateway's, for its route inventory.
	withCfg := tfContext(t, m, map[string]cty.Value{"config_yaml": cty.StringVal("models: {}"), "environment": cty.MapVal(map[string]cty.Value{"BEDROCK_REGION": cty.StringVal("eu-west-1")})})
	renv = val(t, withCfg, child(fn, "environment"), "variables").AsValueMap()
	genv := withCfg.Variables["local"].GetAttr("environment")
	for _, k := range []string{"FNGATE_CONFIG_YAML", "BEDROCK_REGION"} {
		if got, ok := renv[k]; !ok || !got.Equals(genv.GetAttr(k)).True() {
			t.Errorf("remediation %s = %v, the gateway's %v: the inventory must be the gateway's routes", k, got, genv.GetAttr(k))
		}
	}

	// The burst alarms, one per correlation, against the metric line the engine emits.
	alarms := m.find("resource", "aws_cloudwatch_metric_alarm", "remediation_bursts")
	forEach := val(t, ctx, alarms, "for_each").AsValueMap()
	want := map[string]struct{ correlation, actions string }{
		"unexplained":       {remediation.CorrelatedNone, "oncall"},
		"provider-incident": {remediation.CorrelatedIncident, "fyi"},
	}
	topics := tfContext(t, m, map[string]cty.Value{
		"alarm_actions": cty.ListVal([]cty.Value{cty.StringVal("oncall")}), "incident_alarm_actions": cty.ListVal([]cty.Value{cty.StringVal("fyi")}),
	})
	topicsEach := val(t, topics, alarms, "for_each").AsValueMap()
	if len(forEach) != len(want) {
		t.Fatalf("burst alarms %v, want %v", forEach, want)
	}
	for key, w := range want {
		inner := ctx.NewChild()
		inner.Variables = map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(key), "value": forEach[key]})}
		q := valString(t, inner, child(alarms, "metric_query"), "expression")
		if wq := fmt.Sprintf("SELECT SUM(%s) FROM SCHEMA(fngate, Correlation, Mode) WHERE Mode = 'dry_run' AND Correlation = '%s'", remediation.MetricBursts, w.correlation); q != wq {
			t.Errorf("burst alarm %s query %q, want %q", key, q, wq)
		}
		inner = topics.NewChild()
		inner.Variables = map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(key), "value": topicsEach[key]})}
		if got := valStrings(t, inner, alarms, "alarm_actions"); !slices.Equal(got, []string{w.actions}) {
			t.Errorf("burst alarm %s notifies %v, want %s's topic", key, got, w.actions)
		}
	}
}

// serviceHealthEntryMatches evaluates the Service Health sink's three clauses on a log entry:
// its logName, jsonPayload.category=, and jsonPayload.impactedProducts: (has).
func serviceHealthEntryMatches(entry map[string]any, project string) bool {
	payload, _ := entry["jsonPayload"].(map[string]any)
	products, _ := payload["impactedProducts"].(string)
	return entry["logName"] == "projects/"+project+"/logs/"+remediation.ServiceHealthLog &&
		payload["category"] == "INCIDENT" && strings.Contains(products, "Vertex")
}

func checkTerraformGCPHealth(t *testing.T, m *module, ctx *hcl.EvalContext) {
	t.Helper()
	sink := m.find("resource", "google_logging_project_sink", "service_health")
	want := `logName="projects/var.project_id/logs/` + remediation.ServiceHealthLog + `" AND ` + remediation.ServiceHealthLogFilter
	if f := valString(t, ctx, sink, "filter"); f != want {
		t.Errorf("Service Health sink filter\n%s\nwant\n%s", f, want)
	}
	if valString(t, ctx, sink, "destination") != "pubsub.googleapis.com/google_pubsub_topic.provider_errors.id" || valString(t, ctx, sink, "unique_writer_identity") != "true" {
		t.Errorf("the Service Health sink must publish to the remediation topic with its own writer identity")
	}
	pub := m.find("resource", "google_pubsub_topic_iam_member", "service_health_publisher")
	if valString(t, ctx, pub, "role") != "roles/pubsub.publisher" || valString(t, ctx, pub, "member") != "google_logging_project_sink.service_health.writer_identity" ||
		valString(t, ctx, pub, "topic") != "google_pubsub_topic.provider_errors.name" {
		t.Errorf("the Service Health sink's writer identity must publish to the topic")
	}
	// The entries the handler's tests decode pass the filter; another product's would not.
	for _, name := range []string{"service_health_vertex_open.inner.json", "service_health_vertex_closed.inner.json"} {
		entry := readJSON(t, filepath.Join("events/eventarc/testdata", name)).(map[string]any)
		if !serviceHealthEntryMatches(entry, "acme-llm") {
			t.Errorf("the Service Health sink filter does not pass %s", name)
		}
		entry["jsonPayload"].(map[string]any)["impactedProducts"] = "['Cloud Run']"
		if serviceHealthEntryMatches(entry, "acme-llm") {
			t.Errorf("the Service Health sink filter passes a Cloud Run incident")
		}
	}

	// The function: the incident cooldown, and the gateway's config file for its inventory.
	rem := m.find("resource", "google_cloudfunctions2_function", "remediation")
	remEnv := val(t, ctx, child(rem, "service_config"), "environment_variables")
	if d, err := time.ParseDuration(remEnv.GetAttr("REMEDIATION_INCIDENT_COOLDOWN").AsString()); err != nil || d != remediation.DefaultIncidentCooldown {
		t.Errorf("REMEDIATION_INCIDENT_COOLDOWN default %v", remEnv.GetAttr("REMEDIATION_INCIDENT_COOLDOWN"))
	}
	withCfg := tfContext(t, m, map[string]cty.Value{"config_yaml": cty.StringVal("models: {}"),
		"environment": cty.MapVal(map[string]cty.Value{"VERTEX_LOCATION": cty.StringVal("europe-west4")})})
	remEnv = val(t, withCfg, child(rem, "service_config"), "environment_variables")
	gwEnv := withCfg.Variables["local"].GetAttr("environment")
	for _, k := range []string{"FNGATE_CONFIG", "VERTEX_LOCATION"} {
		if !remEnv.Type().HasAttribute(k) || !remEnv.GetAttr(k).Equals(gwEnv.GetAttr(k)).True() {
			t.Errorf("remediation %s differs from the gateway's: the inventory must be the gateway's routes", k)
		}
	}
	gw := m.find("resource", "google_cloudfunctions2_function", "gateway")
	vol := func(fn *hclsyntax.Block) cty.Value {
		for _, b := range child(fn, "service_config").Body.Blocks {
			if b.Type == "dynamic" && b.Labels[0] == "secret_volumes" {
				content := child(b, "content")
				return cty.ObjectVal(map[string]cty.Value{"for_each": val(t, withCfg, b, "for_each"),
					"mount_path": val(t, withCfg, content, "mount_path"), "secret": val(t, withCfg, content, "secret")})
			}
		}
		return cty.NilVal
	}
	if g, r := vol(gw), vol(rem); r == cty.NilVal || !g.Equals(r).True() {
		t.Errorf("the remediation function must mount the gateway's config secret as the gateway does: %#v vs %#v", r, g)
	}
	acc := m.find("resource", "google_secret_manager_secret_iam_member", "remediation_config")
	if count(t, withCfg, acc) != 1 || count(t, ctx, acc) != 0 || valString(t, withCfg, acc, "role") != "roles/secretmanager.secretAccessor" ||
		valString(t, withCfg, acc, "member") != "google_service_account.remediation.member" || !strings.HasSuffix(valString(t, withCfg, acc, "secret_id"), "-config") {
		t.Errorf("the remediation account must read the config secret (only when there is one)")
	}

	// The bursts metric and its two alerts, against the engine's line.
	var golden map[string]any
	lines := strings.Split(strings.TrimSpace(testdata(t, "events/remediation/testdata/metric_bursts_cloudlogging.golden")), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &golden); err != nil {
		t.Fatal(err)
	}
	metric := m.find("resource", "google_logging_metric", "remediation_bursts")
	if mf := valString(t, ctx, metric, "filter"); !strings.Contains(mf, fmt.Sprintf("jsonPayload.metric=%q", golden["metric"])) || !strings.Contains(mf, "google_cloudfunctions2_function.remediation.name") {
		t.Errorf("bursts metric filter %s", mf)
	}
	ext := val(t, ctx, metric, "label_extractors").AsValueMap()
	for _, l := range []string{"correlation", "mode"} {
		if _, ok := golden[l]; !ok {
			t.Fatalf("the golden bursts line has no %s", l)
		}
		if e, ok := ext[l]; !ok || e.AsString() != "EXTRACT(jsonPayload."+l+")" {
			t.Errorf("bursts label %s extractor %v", l, e)
		}
	}
	channels := tfContext(t, m, map[string]cty.Value{
		"alert_notification_channels":    cty.ListVal([]cty.Value{cty.StringVal("oncall")}),
		"incident_notification_channels": cty.ListVal([]cty.Value{cty.StringVal("fyi")}),
	})
	alerts := m.find("resource", "google_monitoring_alert_policy", "remediation_bursts")
	each := val(t, channels, alerts, "for_each").AsValueMap()
	for key, w := range map[string][2]string{"unexplained": {remediation.CorrelatedNone, "oncall"}, "provider-incident": {remediation.CorrelatedIncident, "fyi"}} {
		inner := channels.NewChild()
		inner.Variables = map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(key), "value": each[key]})}
		f := valString(t, inner, child(child(alerts, "conditions"), "condition_threshold"), "filter")
		if !strings.Contains(f, "logging.googleapis.com/user/google_logging_metric.remediation_bursts.name") || !strings.HasSuffix(f, fmt.Sprintf(`metric.label.mode = "dry_run" AND metric.label.correlation = %q`, w[0])) {
			t.Errorf("burst alert %s filter %s", key, f)
		}
		if got := valStrings(t, inner, alerts, "notification_channels"); !slices.Equal(got, []string{w[1]}) {
			t.Errorf("burst alert %s notifies %v, want %s", key, got, w[1])
		}
	}
}
