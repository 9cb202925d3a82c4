// Command coldstart measures the Lambda bootstrap's cold start the way Lambda sees it: from
// exec of the bootstrap to the first byte of its response on the Runtime API (a fake one,
// internal/fakeruntime), beside a hello-world lambdaurl bootstrap measured the same
// way. It also reports the arm64 binary sizes the deployment ships.
//
//	go run ./scripts/coldstart [-n 20]
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
	pkg   string
	env   []string
	event []byte
}

const inlineConfig = `auth: none
connections: {mock: {kind: mock}}
models: {mock/echo: {routes: [{connection: mock, model: echo}]}}
`

func main() {
	runs := flag.Int("n", 20, "runs per variant")
	gcf := flag.Bool("gcf", true, "also time the Cloud Functions runner")
	flag.Parse()
	if err := run(*runs, *gcf); err != nil {
		fmt.Fprintln(os.Stderr, "coldstart:", err)
		os.Exit(1)
	}
}

func run(runs int, gcf bool) error {
	dir, err := os.MkdirTemp("", "coldstart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	chat := fakeruntime.URLEvent("POST", "/v1/chat/completions", map[string]string{"content-type": "application/json"},
		`{"model":"mock/echo","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	variants := []variant{
		{name: "hello-world lambdaurl", pkg: "./scripts/coldstart/hello", event: fakeruntime.URLEvent("GET", "/", nil, "")},
		{name: "fngate, inline config", pkg: "./functions/lambda", env: []string{"FNGATE_CONFIG_YAML=" + inlineConfig}, event: chat},
		{name: "fngate, embedded default (AWS_IAM)", pkg: "./functions/lambda", env: []string{"FNGATE_URL_AUTH_TYPE=AWS_IAM"}, event: chat},
	}

	fmt.Println("arm64 binaries (CGO_ENABLED=0 -trimpath -tags lambda.norpc -ldflags='-s -w'):")
	for _, pkg := range []string{"./scripts/coldstart/hello", "./functions/lambda"} {
		out := filepath.Join(dir, "arm64", filepath.Base(pkg), "bootstrap")
		if err := build(pkg, out, "linux", "arm64"); err != nil {
			return err
		}
		st, err := os.Stat(out)
		if err != nil {
			return err
		}
		fmt.Printf("  %-28s %6.2f MB (%d bytes)\n", pkg, float64(st.Size())/1e6, st.Size())
	}

	bins := map[string]string{}
	for _, v := range variants {
		if bins[v.pkg] != "" {
			continue
		}
		out := filepath.Join(dir, "host", filepath.Base(v.pkg), "bootstrap")
		if err := build(v.pkg, out, "", ""); err != nil {
			return err
		}
		bins[v.pkg] = out
	}

	type sample struct{ poll, first time.Duration }
	results := make([][]sample, len(variants))
	for i := 0; i < runs; i++ {
		for j, v := range variants {
			poll, first, err := once(bins[v.pkg], v)
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			results[j] = append(results[j], sample{poll, first})
		}
	}

	fmt.Printf("\ncold start on this machine, median of %d runs (min-max):\n", runs)
	fmt.Printf("  %-36s %-24s %s\n", "variant", "exec -> first /next", "exec -> first response byte")
	for j, v := range variants {
		var polls, firsts []time.Duration
		for _, s := range results[j] {
			polls = append(polls, s.poll)
			firsts = append(firsts, s.first)
		}
		fmt.Printf("  %-36s %-24s %s\n", v.name, summary(polls), summary(firsts))
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
		fmt.Printf("  %-36s %.2fx (%.2fx-%.2fx)\n", v.name, ratios[runs/2], ratios[runs/10], ratios[runs*9/10])
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

func build(pkg, out, goos, goarch string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-tags", "lambda.norpc", "-ldflags=-s -w", "-o", out, pkg)
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
