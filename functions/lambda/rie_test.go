package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fngate/fngate/internal/fakeruntime"
	"github.com/fngate/fngate/internal/loopback"
)

// TestRIESmoke runs the same bootstrap under AWS's Runtime Interface Emulator, the runtime
// side Lambda itself is built from. RIE buffers the streamed response, so only the
// assembled body is checked; incremental delivery is the fake Runtime API tests' job.
func TestRIESmoke(t *testing.T) {
	rie, err := exec.LookPath("aws-lambda-rie")
	if err != nil {
		t.Skip("aws-lambda-rie is not on PATH: skipping the RIE smoke test (.ci/run installs it; or go install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d)")
	}
	bin := bootstrap(t)
	invokeAddr, apiAddr := loopback.ForTest(t).Addr(), loopback.ForTest(t).Addr()
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", invokeAddr, "--runtime-api-address", apiAddr, bin)
	cmd.Env = append(os.Environ(), "FNGATE_CONFIG_YAML="+testConfig, "AWS_LAMBDA_FUNCTION_TIMEOUT=30", "LOG_LEVEL=error")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("RIE output:\n%s", out.String())
		}
	})

	url := "http://" + invokeAddr + "/2015-03-31/functions/function/invocations"
	var body []byte
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Post(url, "application/json", bytes.NewReader(chat("mock/echo", true)))
		if err == nil {
			body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode == 200 {
				break
			}
			err = fmt.Errorf("status %d: %s", resp.StatusCode, body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("RIE did not answer: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	p, payload, err := fakeruntime.SplitPrelude(body)
	if err != nil {
		t.Fatalf("%v in %q", err, body)
	}
	if p.StatusCode != 200 || p.Headers["Content-Type"] != "text/event-stream" {
		t.Errorf("prelude = %+v", p)
	}
	events := sseData(string(payload))
	if content(t, events) != "one two three" || !hasDone(events) {
		t.Errorf("payload = %q", payload)
	}
	// RIE relays the bootstrap's output through its own pipe, so the start-up line can reach
	// the buffer after the answer: wait for it rather than read the buffer once.
	for readyBy := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), `"msg":"ready"`) && time.Now().Before(readyBy); {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(out.String(), `"msg":"ready"`) {
		t.Errorf("the bootstrap's start-up line is missing from the output")
	}
}
