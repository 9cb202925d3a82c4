// Command coldstart measures the Lambda bootstrap's cold start the way Lambda sees it: from
// exec of the bootstrap to the first byte of its response on the Runtime API (a fake one,
// internal/fakeruntime), beside a hello-world lambdaurl bootstrap measured the same
// way. It also reports the arm64 binary sizes the deployment ships.
//
//	go run ./scripts/coldstart [-n 20] [-baseline DIR]
//
// Two configurations of the gateway are timed: every feature off (an inline config with one
// mock model), and limits + a stored-responses store + OpenTelemetry export on (a bootstrap
// built with -tags otel, as the templates build one whose config has a telemetry block). The
// Lambda function refuses file and memory stores for stored responses (instances share
// neither), so that store is DynamoDB, opened lazily and not called by the chat request; the
// limits count in memory, which Lambda allows for one instance; the export goes to a local
// OTLP receiver after the response. -baseline DIR also builds ./functions/lambda from
// another checkout (for example `git archive main | tar -x -C DIR`) and times it in the same
// rounds, so before and after are measured side by side.
//
// Timing uses binaries built for this machine with the Lambda flags; the runs of the
// variants are interleaved so drift in machine load hits them alike. Absolute times depend on
// the machine: compare the variants, not the numbers with Lambda's.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/fngate/fngate/internal/fakeruntime"
	"github.com/fngate/fngate/internal/loopback"
)

type variant struct {
	name  string
	src   string // the module root the package is built from
	pkg   string
	tags  string // besides lambdaTags
	env   []string
	event []byte
}

// lambdaTags are the Makefile's (LAMBDA_FLAGS): lambda.norpc and grpcnotrace.
const lambdaTags = "lambda.norpc,grpcnotrace"

// featuresConfig turns on limits (a rate and a budget on the one key, counted in memory),
// stored responses (DynamoDB, through RESPONSES_TABLE) and OpenTelemetry export (the
// collector's endpoint is filled in).
const featuresConfig = `keys: [{name: app, value: cold-start-key, rate: {requests_per_minute: 1000}, budget: {usd_per_day: 100}}]
counters: {store: memory}
responses: {store: dynamodb, table: fngate-responses}
telemetry: {otlp: {endpoint: "http://%s"}}
connections: {mock: {kind: mock}}
models: {mock/echo: {price: {input_per_mtok: 1, output_per_mtok: 2}, routes: [{connection: mock, model: echo}]}}
`

const inlineConfig = `auth: none
connections: {mock: {kind: mock}}
models: {mock/echo: {routes: [{connection: mock, model: echo}]}}
`

func main() {
	runs := flag.Int("n", 20, "runs per variant")
	gcf := flag.Bool("gcf", true, "also time the Cloud Functions runner")
	baseline := flag.String("baseline", "", "a checkout whose ./functions/lambda is timed beside this one's")
	flag.Parse()
	if err := run(*runs, *gcf, *baseline); err != nil {
		fmt.Fprintln(os.Stderr, "coldstart:", err)
		os.Exit(1)
	}
}

func run(runs int, gcf bool, baseline string) error {
	dir, err := os.MkdirTemp("", "coldstart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	collector, err := otlpSink()
	if err != nil {
		return err
	}
	defer collector.Close()

	chat := fakeruntime.URLEvent("POST", "/v1/chat/completions", map[string]string{"content-type": "application/json"},
		`{"model":"mock/echo","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	keyed := fakeruntime.URLEvent("POST", "/v1/chat/completions", map[string]string{"content-type": "application/json", "authorization": "Bearer cold-start-key"},
		`{"model":"mock/echo","stream":true,"max_completion_tokens":64,"messages":[{"role":"user","content":"hi"}]}`)
	features := []string{"FNGATE_CONFIG_YAML=" + fmt.Sprintf(featuresConfig, collector.Addr()), "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=AKIDCOLDSTART", "AWS_SECRET_ACCESS_KEY=cold-start", "AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:9"}
	here := "."
	gateways := func(src, suffix string) []variant {
		return []variant{
			{name: "fngate, inline config" + suffix, src: src, pkg: "./functions/lambda", env: []string{"FNGATE_CONFIG_YAML=" + inlineConfig}, event: chat},
			{name: "fngate, embedded default (AWS_IAM)" + suffix, src: src, pkg: "./functions/lambda", env: []string{"FNGATE_URL_AUTH_TYPE=AWS_IAM"}, event: chat},
			{name: "fngate, limits+responses+otel" + suffix, src: src, pkg: "./functions/lambda", tags: "otel", env: features, event: keyed},
		}
	}
	variants := []variant{{name: "hello-world lambdaurl", src: here, pkg: "./scripts/coldstart/hello", event: fakeruntime.URLEvent("GET", "/", nil, "")}}
	if baseline != "" {
		variants = append(variants, gateways(baseline, " [baseline]")...)
	}
	variants = append(variants, gateways(here, "")...)

	fmt.Println("arm64 binaries (CGO_ENABLED=0 -trimpath -tags " + lambdaTags + " -ldflags='-s -w'):")
	sized := map[string]bool{}
	for i, v := range variants {
		key := v.src + " " + v.pkg + " " + v.tags
		if sized[key] {
			continue
		}
		sized[key] = true
		out := filepath.Join(dir, "arm64", fmt.Sprint(i), "bootstrap")
		if err := build(v, out, "linux", "arm64"); err != nil {
			return err
		}
		st, err := os.Stat(out)
		if err != nil {
			return err
		}
		fmt.Printf("  %-52s %6.2f MB (%d bytes)\n", describe(v), float64(st.Size())/1e6, st.Size())
	}

	bins := map[string]string{}
	for i, v := range variants {
		key := v.src + " " + v.pkg + " " + v.tags
		if bins[key] != "" {
			continue
		}
		out := filepath.Join(dir, "host", fmt.Sprint(i), "bootstrap")
		if err := build(v, out, "", ""); err != nil {
			return err
		}
		bins[key] = out
	}
	bin := func(v variant) string { return bins[v.src+" "+v.pkg+" "+v.tags] }

	type sample struct{ poll, first time.Duration }
	results := make([][]sample, len(variants))
	for i := 0; i < runs; i++ {
		for j, v := range variants {
			poll, first, err := once(bin(v), v)
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			results[j] = append(results[j], sample{poll, first})
		}
	}

	fmt.Printf("\ncold start on this machine, median of %d runs (min-max):\n", runs)
	fmt.Printf("  %-48s %-24s %s\n", "variant", "exec -> first /next", "exec -> first response byte")
	for j, v := range variants {
		var polls, firsts []time.Duration
		for _, s := range results[j] {
			polls = append(polls, s.poll)
			firsts = append(firsts, s.first)
		}
		fmt.Printf("  %-48s %-24s %s\n", v.name, summary(polls), summary(firsts))
	}
	// Each run of a variant follows the hello-world run of its round: the ratio of each such
	// pair, so drift between rounds cancels out.
	fmt.Printf("\nexec -> first response byte over the hello-world run of the same round, median of %d pairs (p10-p90):\n", runs)
	for j, v := range variants[1:] {
		ratios := make([]float64, runs)
		for i := range ratios {
			ratios[i] = float64(results[j+1][i].first) / float64(results[0][i].first)
		}
		slices.Sort(ratios)
		fmt.Printf("  %-48s %.2fx (%.2fx-%.2fx)\n", v.name, ratios[runs/2], ratios[runs/10], ratios[runs*9/10])
	}
	if !gcf {
		return nil
	}
	return coldStartGCF(dir, runs)
}

// coldStartGCF times the Cloud Functions runner (functions/gcf/cmd, the functions framework
// around the Gateway function) from exec to the first byte of its first answer. That first
// request also builds the gateway, as on Cloud Functions, where the instance is up at once
// and the first request pays for the configuration.
func coldStartGCF(dir string, runs int) error {
	bin := filepath.Join(dir, "host", "gcf", "fngate-gcf")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./functions/gcf/cmd")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./functions/gcf/cmd: %v\n%s", err, b)
	}
	amd := filepath.Join(dir, "amd64", "fngate-gcf")
	cmd = exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", amd, "./functions/gcf/cmd")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./functions/gcf/cmd: %v\n%s", err, b)
	}
	if st, err := os.Stat(amd); err == nil {
		fmt.Printf("\nCloud Functions runner (linux/amd64, stripped): %.2f MB; Cloud Build compiles its own from the upload\n", float64(st.Size())/1e6)
	}
	var firsts []time.Duration
	for i := 0; i < runs; i++ {
		d, err := onceGCF(bin)
		if err != nil {
			return fmt.Errorf("gcf: %w", err)
		}
		firsts = append(firsts, d)
	}
	fmt.Printf("  %-36s %-24s %s\n", "functions framework + Gateway", "", summary(firsts))
	return nil
}

func onceGCF(bin string) (time.Duration, error) {
	reserved, err := loopback.Reserve()
	if err != nil {
		return 0, err
	}
	defer reserved.Release()
	port := reserved.String()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "PORT="+port, "FNGATE_CONFIG_YAML="+inlineConfig, "FNGATE_INVOKER_AUTH=IAM")
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	body := `{"model":"mock/echo","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	for time.Since(start) < 10*time.Second {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err != nil {
			time.Sleep(200 * time.Microsecond)
			continue
		}
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		buf := make([]byte, 12)
		if _, err := io.ReadFull(c, buf); err != nil {
			c.Close()
			return 0, err
		}
		first := time.Since(start)
		c.Close()
		if string(buf[9:12]) != "200" {
			return 0, fmt.Errorf("status %q", buf)
		}
		return first, nil
	}
	return 0, fmt.Errorf("the runner did not listen within 10s")
}

func describe(v variant) string {
	d := v.pkg
	if v.tags != "" {
		d += " -tags " + v.tags
	}
	if v.src != "." {
		d += " (" + v.src + ")"
	}
	return d
}

func build(v variant, out, goos, goarch string) error {
	tags := lambdaTags
	if v.tags != "" {
		tags += "," + v.tags
	}
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	pkg := v.pkg
	cmd := exec.Command("go", "build", "-trimpath", "-tags", tags, "-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir = v.src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if goos != "" {
		cmd.Env = append(cmd.Env, "GOOS="+goos, "GOARCH="+goarch)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// once starts a fresh bootstrap with one event waiting, and times its first answer.
func once(bin string, v variant) (poll, first time.Duration, err error) {
	rt := fakeruntime.New()
	defer rt.Close()
	inv := rt.Invoke(fakeruntime.Request{Event: v.event})
	cmd := rt.Command(bin, v.env...)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	c, err := inv.Chunk(0, 10*time.Second)
	if err != nil {
		return 0, 0, err
	}
	res, err := inv.Wait(10 * time.Second)
	if err != nil {
		return 0, 0, err
	}
	if p, _, err := fakeruntime.SplitPrelude(res.Body); err != nil || p.StatusCode != 200 {
		return 0, 0, fmt.Errorf("bad answer (%v): %q", err, res.Body)
	}
	return inv.Delivered.Sub(start), c.At.Sub(start), nil
}

func summary(d []time.Duration) string {
	slices.Sort(d)
	ms := func(x time.Duration) string { return fmt.Sprintf("%.1f", float64(x)/float64(time.Millisecond)) }
	return fmt.Sprintf("%s ms (%s-%s)", ms(d[len(d)/2]), ms(d[0]), ms(d[len(d)-1]))
}

// otlpSink is the collector of the features-on variant: it accepts every OTLP/HTTP export
// with an empty (valid) protobuf answer.
func otlpSink() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/x-protobuf")
		}))
	}()
	return ln, nil
}
