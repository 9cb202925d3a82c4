package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/fngate/fngate/internal/emulator"
	"github.com/fngate/fngate/internal/fakeruntime"
)

// TestCompactionAcrossInstances runs two bootstraps whose compaction key comes from Secrets
// Manager (moto): what one instance compacts on a mock route (POST /v1/responses/compact
// through the function URL), the other opens when the client continues there, and neither
// writes the key to its log.
func TestCompactionAcrossInstances(t *testing.T) {
	moto := emulator.Moto(t)
	sm := secretsmanager.New(secretsmanager.Options{Region: "us-east-1", BaseEndpoint: aws.String(moto),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	const key = "q7bXQ0hK2mE3wCq1Xf0l8m9p3sZ2YtA5vR6uN4oJk1c="
	if _, err := sm.CreateSecret(context.Background(), &secretsmanager.CreateSecretInput{Name: aws.String("fngate/compaction"),
		SecretString: aws.String(`{"k2026":"` + key + `"}`)}); err != nil {
		t.Fatal(err)
	}
	cfg := `
auth: none
connections: {mock: {kind: mock}}
models: {m: {routes: [{connection: mock, model: echo}]}}
responses: {compaction_keys: [{id: k2026, key: "aws-sm://fngate/compaction#k2026"}]}
`
	env := []string{"FNGATE_CONFIG_YAML=" + cfg, "FNGATE_URL_AUTH_TYPE=NONE", "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test",
		"AWS_ENDPOINT_URL=" + moto, "AWS_EC2_METADATA_DISABLED=true"}
	a, b := start(t, env...), start(t, env...)
	post := func(in *instance, path, body string) (int, string) {
		ev := fakeruntime.URLEvent("POST", path, map[string]string{"content-type": "application/json"}, body)
		_, p, payload := in.invoke(t, fakeruntime.Request{Event: ev})
		return p.StatusCode, payload
	}
	status, payload := post(a, "/v1/responses/compact", `{"model":"m","input":[{"role":"user","content":"my code word is PAPAYA"},{"role":"assistant","content":"Noted."}]}`)
	var c struct {
		Object string            `json:"object"`
		Output []json.RawMessage `json:"output"`
	}
	if status != 200 || json.Unmarshal([]byte(payload), &c) != nil || c.Object != "response.compaction" || len(c.Output) != 2 ||
		!strings.Contains(string(c.Output[1]), `"encrypted_content":"fngate:v1:compaction:k2026:`) {
		t.Fatalf("compact on instance a: %d %s", status, payload)
	}
	in, _ := json.Marshal(c.Output[1:])
	status, payload = post(b, "/v1/responses", `{"model":"m","input":`+string(in)+`}`)
	if status != 200 || !strings.Contains(payload, "Summary of the earlier conversation") || !strings.Contains(payload, "PAPAYA") {
		t.Fatalf("continuing on instance b: %d %s", status, payload)
	}
	for name, inst := range map[string]*instance{"a": a, "b": b} {
		if strings.Contains(inst.out.String(), key) {
			t.Errorf("instance %s logged the compaction key", name)
		}
	}
}
