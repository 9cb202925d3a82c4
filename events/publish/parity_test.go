package publish_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/record"
	"github.com/fngate/fngate/core/telemetry"
	"github.com/fngate/fngate/events/publish"
	"github.com/fngate/fngate/events/remediation"
)

const failoverConfig = `
connections:
  mock: {kind: mock}
models:
  demo/failover:
    routing: {policy: ordered, max_attempts: 2}
    routes:
      - {connection: mock, model: "error:429"}
      - {connection: mock, model: echo}
`

// The two delivery paths (the EventBridge detail, and the log line a CloudWatch Logs
// subscription or a GCP log sink carries) must give remediation the same record.
func TestDetailMatchesTheGatewaysLogLine(t *testing.T) {
	for _, format := range []string{telemetry.FormatCloudWatch, telemetry.FormatCloudLogging} {
		t.Run(format, func(t *testing.T) {
			cfg, err := config.Parse(context.Background(), []byte(failoverConfig), config.Options{})
			if err != nil {
				t.Fatal(err)
			}
			reg := providers.Registry{}
			mock.Register(reg)
			var logs bytes.Buffer
			var mu sync.Mutex
			var got []*record.Attempt
			gw, err := gateway.New(cfg, gateway.Options{
				Registry: reg,
				Logger:   telemetry.NewLogger(&logs, format, nil),
				OnAttempt: func(a *record.Attempt) {
					mu.Lock()
					got = append(got, a)
					mu.Unlock()
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			rr := httptest.NewRecorder()
			gw.ServeHTTP(rr, httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
				strings.NewReader(`{"model":"demo/failover","messages":[{"role":"user","content":"hi"}]}`)))
			if rr.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rr.Code, rr.Body)
			}
			var line []byte
			for _, l := range bytes.Split(logs.Bytes(), []byte("\n")) {
				if bytes.Contains(l, []byte(`"provider_error"`)) {
					line = l
				}
			}
			fromLog, err := remediation.DecodeLogLine(line)
			if err != nil {
				t.Fatalf("%v in %s", err, logs.String())
			}
			if len(got) != 2 || !got[0].Failed() {
				t.Fatalf("attempts %+v", got)
			}
			fromEvent := publish.Detail(got[0])
			if fromLog.Time.Sub(fromEvent.Time).Abs() > time.Second {
				t.Fatalf("times differ: log %v, event %v", fromLog.Time, fromEvent.Time)
			}
			fromLog.Time = fromEvent.Time
			if fromLog != fromEvent {
				t.Fatalf("the log line and the event detail disagree:\n log   %+v\n event %+v", fromLog, fromEvent)
			}
			if fromEvent.Route != "mock/error:429" || fromEvent.ErrorClass != "rate_limited" || fromEvent.Status != 429 {
				t.Fatalf("record %+v", fromEvent)
			}
		})
	}
}
