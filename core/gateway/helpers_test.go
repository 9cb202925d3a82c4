package gateway_test

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/core/providers/openaicompat"
	"github.com/fngate/fngate/core/telemetry"
	"github.com/fngate/fngate/internal/gatewaytest"
)

// Every log line the suite writes, every answer (headers and body) its gateways send, and
// every secret its configs hold, in each spelling the config records: TestMain checks that no
// secret ever reached a log line or a client.
var (
	suiteLogs    gatewaytest.LogBuffer
	suiteAnswers gatewaytest.LogBuffer
	suiteSecrets sync.Map
)

func TestMain(m *testing.M) {
	code := m.Run()
	all, answers := suiteLogs.String(), suiteAnswers.String()
	suiteSecrets.Range(func(k, _ any) bool {
		for where, text := range map[string]string{"logs": all, "answers to clients": answers} {
			if strings.Contains(text, k.(string)) {
				fmt.Fprintf(os.Stderr, "FAIL: a configured secret (%.6s...) appears in the suite's %s\n", k.(string), where)
				code = 1
			}
		}
		return true
	})
	// The whole suite (no -run filter, no benchmarks only) runs the failover tests, which must
	// have logged provider errors; if none shows, the scan is not looking at the suite's logs.
	whole := flag.Lookup("test.run").Value.String() == "" && strings.Contains(all, `"msg":"request"`)
	if code == 0 && whole && !strings.Contains(all, `"msg":"provider_error"`) {
		fmt.Fprintln(os.Stderr, "FAIL: the log scan saw no provider_error line; is it scanning the suite's logs at all?")
		code = 1
	}
	if code == 0 && whole && !strings.Contains(answers, `"code":"upstream_bad_request"`) {
		fmt.Fprintln(os.Stderr, "FAIL: the answer scan saw no upstream error; is it scanning the suite's answers at all?")
		code = 1
	}
	os.Exit(code)
}

type testGateway struct {
	*gatewaytest.Server
	logs *gatewaytest.LogBuffer
}

func registry() providers.Registry {
	r := providers.Registry{}
	mock.Register(r)
	openaicompat.Register(r)
	return r
}

// newGateway serves yamlConfig through a real gateway on loopback.
func newGateway(t *testing.T, yamlConfig string, opts ...func(*gateway.Options)) *testGateway {
	t.Helper()
	return newGatewayTB(t, yamlConfig, opts...)
}

// newBenchGateway logs to io.Discard through the real JSON logger, so benchmarks pay for
// encoding log lines but not for an ever-growing test buffer.
func newBenchGateway(b *testing.B, yamlConfig string) *testGateway {
	return newGatewayTB(b, yamlConfig, func(o *gateway.Options) {
		o.Logger = telemetry.NewLogger(io.Discard, telemetry.FormatCloudWatch, nil)
	})
}

func newGatewayTB(t testing.TB, yamlConfig string, opts ...func(*gateway.Options)) *testGateway {
	t.Helper()
	return newWrappedGateway(t, yamlConfig, nil, opts...)
}

// newWrappedGateway serves yamlConfig behind wrap (nil: none), as a platform's adapter would
// stand in front of the gateway.
func newWrappedGateway(t testing.TB, yamlConfig string, wrap func(http.Handler) http.Handler, opts ...func(*gateway.Options)) *testGateway {
	t.Helper()
	cfg := gatewaytest.Config(t, yamlConfig, config.Options{Getenv: func(string) string { return "" }})
	for _, s := range cfg.Secrets {
		suiteSecrets.Store(s, true)
	}
	logs := &gatewaytest.LogBuffer{}
	// Metrics' EMF lines would otherwise go to the test binary's stdout; tests that read them
	// set their own writer.
	opt := gateway.Options{Registry: registry(), Logger: telemetry.NewLogger(io.MultiWriter(logs, &suiteLogs), telemetry.FormatCloudWatch, cfg.Secrets), Metrics: io.Discard}
	for _, o := range opts {
		o(&opt)
	}
	wraps := []func(http.Handler) http.Handler{tapAnswers}
	if _, bench := t.(*testing.B); bench {
		wraps = nil // answers would pile up
	}
	if wrap != nil {
		wraps = append(wraps, wrap)
	}
	return &testGateway{Server: gatewaytest.Serve(t, cfg, opt, wraps...), logs: logs}
}

// tapAnswers copies what h sends to clients into suiteAnswers.
func tapAnswers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&answerTap{ResponseWriter: w}, r)
	})
}

type answerTap struct {
	http.ResponseWriter
	headed bool
}

func (a *answerTap) header() {
	if !a.headed {
		a.headed = true
		_ = a.Header().Write(&suiteAnswers)
	}
}

func (a *answerTap) WriteHeader(code int) {
	a.header()
	a.ResponseWriter.WriteHeader(code)
}

func (a *answerTap) Write(b []byte) (int, error) {
	a.header()
	_, _ = suiteAnswers.Write(b)
	return a.ResponseWriter.Write(b)
}

// Unwrap lets the gateway flush through the tap.
func (a *answerTap) Unwrap() http.ResponseWriter { return a.ResponseWriter }

func discardLogger() *slog.Logger { return slog.New(slog.NewJSONHandler(io.Discard, nil)) }
