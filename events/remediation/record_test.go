package remediation_test

import (
	"errors"
	"testing"
	"time"

	"github.com/fngate/fngate/events/remediation"
)

func TestDecodeLogLine(t *testing.T) {
	want := remediation.Record{Time: time.Date(2026, 11, 29, 12, 0, 1, 250113000, time.UTC), RequestID: "req_a1", Endpoint: "chat",
		Route: "claude/claude-sonnet-4-5", Status: 529, ErrorClass: "overloaded", ErrorMessage: "Overloaded"}
	const fields = `"time":"2026-11-29T12:00:01.250113Z","request_id":"req_a1","endpoint":"chat","route":"claude/claude-sonnet-4-5","status":529,"error_class":"overloaded","error_message":"Overloaded","latency_ms":812.4,"stream":true`
	for name, line := range map[string]string{
		"cloudwatch":                  `{"level":"ERROR","msg":"provider_error",` + fields + `}`,
		"cloud logging":               `{"severity":"ERROR","message":"provider_error",` + fields + `}`,
		"prefixed by a pipeline":      `2026-11-29T12:00:01Z stdout F {"msg":"provider_error",` + fields + `}`,
		"payload with message lifted": `{` + fields + `}`,
	} {
		got, err := remediation.DecodeLogLine([]byte(line))
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v", name, got, err)
		}
	}
	for name, c := range map[string]struct {
		line string
		want error
	}{
		"request line":       {`{"msg":"request","route":"a/b","status":502,"error_code":"upstream_error"}`, remediation.ErrNotProviderError},
		"successful attempt": {`{"msg":"attempt","route":"a/b","outcome":"ok"}`, remediation.ErrNotProviderError},
		"EMF line":           {`{"_aws":{"Timestamp":1},"Action":"cool","RemediationActions":1}`, remediation.ErrNotProviderError},
		"platform text":      {"START RequestId: 2f4b Version: $LATEST", remediation.ErrNotProviderError},
		"truncated JSON":     {`{"msg":"provider_error","route":"a/`, remediation.ErrNotProviderError},
		"no route":           {`{"msg":"provider_error","error_class":"auth"}`, remediation.ErrInvalid},
		"no class":           {`{"message":"provider_error","route":"a/b"}`, remediation.ErrInvalid},
	} {
		if _, err := remediation.DecodeLogLine([]byte(c.line)); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
	}
}

func TestDecodeDetail(t *testing.T) {
	got, err := remediation.DecodeDetail([]byte(`{"time":"2026-11-29T12:00:02Z","route":"a/b","error_class":"auth","status":401}`))
	if err != nil || got.Route != "a/b" || got.ErrorClass != "auth" || got.Status != 401 {
		t.Fatalf("%+v, %v", got, err)
	}
	for _, bad := range []string{`[]`, `{"route":"a/b"}`, `{"error_class":"auth"}`, `{"route":1}`} {
		if _, err := remediation.DecodeDetail([]byte(bad)); !errors.Is(err, remediation.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", bad, err)
		}
	}
}
