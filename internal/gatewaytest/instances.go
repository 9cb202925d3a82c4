package gatewaytest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

// InstanceCall sends one request with a JSON body (empty for none) to gateway instance i (0
// or 1) with the key the scenario's config names, and returns the status and the body.
type InstanceCall func(t *testing.T, i int, method, path, body string) (int, []byte)

// StoredAcrossInstances is the platforms' scenario of stored responses (two Lambda
// bootstraps, two Cloud Functions instances, two local server processes on one store):
// instance 0 stores a response of model, instance 1 continues it with previous_response_id,
// fetches it as it was answered and deletes it, and then instance 0 finds it no more. model
// must echo its input.
func StoredAcrossInstances(t *testing.T, do InstanceCall, model string) {
	t.Helper()
	type object struct {
		ID       string `json:"id"`
		Store    bool   `json:"store"`
		Previous string `json:"previous_response_id"`
		Output   []struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
	}
	decode := func(what string, status int, body []byte) object {
		t.Helper()
		var o object
		if err := json.Unmarshal(body, &o); status != http.StatusOK || err != nil {
			t.Fatalf("%s: %d %s", what, status, body)
		}
		return o
	}
	text := func(o object) string {
		if len(o.Output) == 0 || len(o.Output[0].Content) == 0 {
			return ""
		}
		return o.Output[0].Content[0].Text
	}

	st, created := do(t, 0, "POST", "/v1/responses", `{"model":"`+model+`","input":"remember me"}`)
	first := decode("POST on instance 0", st, created)
	if !first.Store || first.ID == "" {
		t.Fatalf("POST on instance 0 was not stored: %s", created)
	}
	st, body := do(t, 1, "POST", "/v1/responses", `{"model":"`+model+`","previous_response_id":"`+first.ID+`","input":"and this"}`)
	second := decode("previous_response_id on instance 1", st, body)
	if second.Previous != first.ID || text(second) != "and this" || !second.Store {
		t.Fatalf("previous_response_id on instance 1: %s", body)
	}
	st, got := do(t, 1, "GET", "/v1/responses/"+first.ID, "")
	if st != http.StatusOK || !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(created)) {
		t.Fatalf("GET on instance 1: %d\n%s\nwant the response as instance 0 answered it\n%s", st, got, created)
	}
	st, body = do(t, 1, "DELETE", "/v1/responses/"+first.ID, "")
	if st != http.StatusOK || !bytes.Contains(body, []byte(`"deleted":true`)) {
		t.Fatalf("DELETE on instance 1: %d %s", st, body)
	}
	if st, body = do(t, 0, "GET", "/v1/responses/"+first.ID, ""); st != http.StatusNotFound {
		t.Fatalf("GET on instance 0 after the DELETE on 1: %d %s", st, body)
	}
	st, body = do(t, 0, "POST", "/v1/responses", `{"model":"`+model+`","previous_response_id":"`+first.ID+`","input":"x"}`)
	if st != http.StatusBadRequest || !bytes.Contains(body, []byte("previous_response_not_found")) {
		t.Fatalf("continuing the deleted response on instance 0: %d %s", st, body)
	}
}
