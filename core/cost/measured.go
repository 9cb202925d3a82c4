package cost

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"os"
)

// Scenarios the benchmark measures at every size, and the profiles refer to.
const (
	ScenarioChat            = "chat"             // chat completions, non-stream
	ScenarioChatStream      = "chat_stream"      // chat completions, 200-chunk stream
	ScenarioMessages        = "messages"         // Anthropic Messages on an Anthropic route, non-stream
	ScenarioMessagesStream  = "messages_stream"  // the same, a 200-event stream
	ScenarioResponses       = "responses"        // Responses on an OpenAI route, non-stream
	ScenarioResponsesStream = "responses_stream" // the same, a 200-event stream
	ScenarioEmbeddings      = "embeddings"       // 16 inputs x 1,536 float dimensions
)

// Figure is what the benchmark measured for one scenario on one function size.
type Figure struct {
	Platform    string  `json:"platform"`    // PlatformLambda or PlatformGCF
	MemoryMB    int     `json:"memory_mb"`   // the size's memory setting
	VCPU        float64 `json:"vcpu"`        // the CPU share it ran under (Lambda: memory / 1,769 MB)
	Concurrency int     `json:"concurrency"` // requests in flight on one instance
	Scenario    string  `json:"scenario"`
	CPUMicros   float64 `json:"cpu_us"`        // the gateway's user+system CPU per request
	AddedMs     float64 `json:"added_p50_ms"`  // wall time the gateway adds to a request, p50
	AddedP99Ms  float64 `json:"added_p99_ms"`  // the same, p99
	AddedTTFTMs float64 `json:"added_ttft_ms"` // streams: what it adds to the first token, p50
	// The spread (max - min) of each of the three over the run's rounds: how far apart two
	// equal sizes can measure.
	AddedSpreadMs     float64 `json:"added_p50_spread_ms"`
	AddedP99SpreadMs  float64 `json:"added_p99_spread_ms"`
	AddedTTFTSpreadMs float64 `json:"added_ttft_spread_ms"`
	ColdStartMs       float64 `json:"cold_start_ms"` // exec to the first byte of the first answer
	PeakRSSMB         float64 `json:"peak_rss_mb"`   // VmHWM over the scenario

	// The floor measured beside it: a bare httputil.ReverseProxy under the same quota.
	ProxyCPUMicros float64 `json:"proxy_cpu_us"`
	ProxyAddedMs   float64 `json:"proxy_added_p50_ms"`
}

// Platforms as Figure names them.
const (
	PlatformLambda = "lambda"
	PlatformGCF    = "gcf"
)

// Measured is the table `make bench-sizes` writes and `fngate cost -measured FILE` reads.
type Measured struct {
	Source  string   `json:"source"` // where and when the figures were measured
	Figures []Figure `json:"figures"`
}

// measuredJSON is `make bench-sizes`'s last run committed with the code (BENCHMARKS.md has
// the same run as a table), so `fngate cost` answers without running the benchmark.
//
//go:embed measured.json
var measuredJSON []byte

// DefaultMeasured is the embedded table.
func DefaultMeasured() (Measured, error) { return parseMeasured("measured.json", measuredJSON) }

// LoadMeasured reads a Measured table from a file `make bench-sizes -json` wrote.
func LoadMeasured(path string) (Measured, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Measured{}, err
	}
	return parseMeasured(path, b)
}

func parseMeasured(name string, b []byte) (Measured, error) {
	var m Measured
	if err := json.Unmarshal(b, &m); err != nil {
		return Measured{}, fmt.Errorf("%s: %w", name, err)
	}
	if len(m.Figures) == 0 {
		return Measured{}, fmt.Errorf("%s: no figures", name)
	}
	for i, f := range m.Figures {
		if f.Platform != PlatformLambda && f.Platform != PlatformGCF {
			return Measured{}, fmt.Errorf("%s: figure %d: platform %q is neither %q nor %q", name, i, f.Platform, PlatformLambda, PlatformGCF)
		}
		if f.Scenario == "" || f.MemoryMB <= 0 || f.VCPU <= 0 || f.Concurrency <= 0 {
			return Measured{}, fmt.Errorf("%s: figure %d: want a scenario, memory, vCPU and concurrency", name, i)
		}
		for _, v := range []float64{f.CPUMicros, f.ColdStartMs, f.PeakRSSMB} {
			if v < 0 || math.IsNaN(v) {
				return Measured{}, fmt.Errorf("%s: figure %d (%s): a negative or NaN figure", name, i, f.Scenario)
			}
		}
	}
	return m, nil
}

// Figure is the measured figure of a scenario on a size; there is no estimate for a size the
// benchmark did not run.
func (m Measured) Figure(platform string, memoryMB, concurrency int, scenario string) (Figure, error) {
	for _, f := range m.Figures {
		if f.Platform == platform && f.MemoryMB == memoryMB && f.Concurrency == concurrency && f.Scenario == scenario {
			return f, nil
		}
	}
	return Figure{}, fmt.Errorf("no measured figure for %s %d MB at concurrency %d, scenario %s (run make bench-sizes)", platform, memoryMB, concurrency, scenario)
}
