package cost

import (
	"math"
	"strings"
	"testing"
)

// testPrices are round numbers, so each expected figure below can be checked by hand.
var testPrices = Prices{
	LambdaGBSecond: 1e-5, LambdaRequest: 2e-7,
	RunVCPUSecond: 2e-5, RunGiBSecond: 2e-6, RunRequest: 4e-7,
	DynamoWRU: 1e-6, DynamoRRU: 2e-7,
	FirestoreRead: 3e-7, FirestoreWrite: 9e-7,
	FargateVCPUHour: 0.04, FargateGBHour: 0.004, ALBHour: 0.02, ALBLCUHour: 0.01,
	LogsIngestGB: 0.5,
}

func testMeasured() Measured {
	return Measured{Source: "test", Figures: []Figure{
		{Platform: PlatformLambda, MemoryMB: 512, VCPU: 0.29, Concurrency: 1, Scenario: ScenarioChat, CPUMicros: 200, AddedMs: 0.6, ColdStartMs: 100},
		{Platform: PlatformLambda, MemoryMB: 512, VCPU: 0.29, Concurrency: 1, Scenario: ScenarioChatStream, CPUMicros: 800, AddedMs: -3, AddedTTFTMs: 0.9, ColdStartMs: 100},
		{Platform: PlatformGCF, MemoryMB: 128, VCPU: 0.083, Concurrency: 1, Scenario: ScenarioChat, CPUMicros: 200, AddedMs: 0.6},
		{Platform: PlatformGCF, MemoryMB: 512, VCPU: 1, Concurrency: 80, Scenario: ScenarioChatStream, CPUMicros: 6000, AddedTTFTMs: 5},
	}}
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) && math.Abs(got-want)/math.Abs(want) > 1e-9 {
		t.Errorf("%s = %.12g, want %.12g", what, got, want)
	}
}

func TestPerRequest(t *testing.T) {
	m := Model{Prices: testPrices, Measured: testMeasured(), Assumptions: Assumptions{CPUTarget: 0.6, ConcurrencyTarget: 0.6}}
	json := Profile{Scenario: ScenarioChat, ModelSeconds: 1, Requests: 1, ItemKB: 3, LogBytes: 1 << 20}
	stream := Profile{Scenario: ScenarioChatStream, ModelSeconds: 10, Requests: 1, ItemKB: 6}
	perSecond := func(n float64) float64 { return n * HoursPerMonth * 3600 } // requests a month at n a second
	for _, tc := range []struct {
		name      string
		p         Profile
		s         Size
		feat      Features
		cold      float64
		volume    float64
		want      Breakdown
		wantError string
	}{
		// 1 s + 0.6 ms, billed 1.001 s at 0.5 GB; a MiB of logs is 1/1024 GB.
		{name: "lambda json", p: json, s: Size{PlatformLambda, 512, 0.29, 1}, volume: 1e6,
			want: Breakdown{Compute: 1.001 * 0.5 * 1e-5, Requests: 2e-7, Logs: 0.5 / 1024}},
		// A stream's time is its model's and what the gateway adds before the first token,
		// never a negative whole-stream figure; 1% of requests pay a 100 ms start.
		{name: "lambda stream, cold share", p: stream, s: Size{PlatformLambda, 512, 0.29, 1}, cold: 0.01, volume: 1e6,
			want: Breakdown{Compute: 10.002 * 0.5 * 1e-5, Requests: 2e-7}},
		// Limits and history on DynamoDB: three 1 KB writes.
		{name: "lambda stores", p: json, s: Size{PlatformLambda, 512, 0.29, 1}, feat: Features{Limits: true, History: true}, volume: 1e6,
			want: Breakdown{Compute: 1.001 * 0.5 * 1e-5, Requests: 2e-7, Stores: 3e-6, Logs: 0.5 / 1024}},
		// The cache: an eventually consistent read of 3 KB (half a unit), a write on a miss.
		{name: "lambda cache, half hits", p: json, s: Size{PlatformLambda, 512, 0.29, 1}, feat: Features{Cache: true, CacheHits: 0.5}, volume: 1e6,
			want: Breakdown{Compute: 1.001 * 0.5 * 1e-5, Requests: 2e-7, Stores: 0.5*2e-7 + 0.5*3*1e-6, Logs: 0.5 / 1024}},
		// Concurrency 1 on Cloud Functions: its own instance, billed in 100 ms steps.
		{name: "gcf alone", p: json, s: Size{PlatformGCF, 128, 0.083, 1}, volume: 1e6,
			want: Breakdown{Compute: 1.1 * (0.083*2e-5 + 0.125*2e-6), Requests: 4e-7, Logs: 0.5 / 1024}},
		// Limits on Firestore: eight shards read, two writes; history one write.
		{name: "gcf stores", p: json, s: Size{PlatformGCF, 128, 0.083, 1}, feat: Features{Limits: true, History: true}, volume: 1e6,
			want: Breakdown{Compute: 1.1 * (0.083*2e-5 + 0.125*2e-6), Requests: 4e-7, Stores: 8*3e-7 + 3*9e-7, Logs: 0.5 / 1024}},
		// One request a second of 10 s streams: about 10 in flight, all on one instance, which
		// is billed while any is (1 - e^-10 of the time): each pays a tenth of its life.
		{name: "gcf shared, few", p: stream, s: Size{PlatformGCF, 512, 1, 80}, volume: perSecond(1),
			want: Breakdown{Compute: (1 - math.Exp(-10.005)) / 1 * (2e-5 + 0.5*2e-6), Requests: 4e-7}},
		// 100 a second: 1,000 in flight, packed at the CPU target, since 0.6 vCPU over 6 ms of
		// CPU per 10 s stream is 1,000 streams, more than 60% of 80 (48): 48 a billed instance.
		{name: "gcf shared, many", p: stream, s: Size{PlatformGCF, 512, 1, 80}, volume: perSecond(100),
			want: Breakdown{Compute: 10.005 / 48 * (2e-5 + 0.5*2e-6), Requests: 4e-7}},
		{name: "unmeasured size", p: json, s: Size{PlatformLambda, 128, 0.07, 1}, volume: 1e6, wantError: "no measured figure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := m
			m.Assumptions.ColdShare = tc.cold
			got, err := m.PerRequest(tc.p, tc.s, tc.feat, tc.volume)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("error %v, want %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			near(t, "compute", got.Compute, tc.want.Compute)
			near(t, "requests", got.Requests, tc.want.Requests)
			near(t, "stores", got.Stores, tc.want.Stores)
			near(t, "logs", got.Logs, tc.want.Logs)
		})
	}
}

func TestContainerMonthly(t *testing.T) {
	m := Model{Prices: testPrices}
	c := Container{Tasks: 2, VCPU: 4, GB: 8, BytesPerReq: 1e4, KeepAliveReqs: 1}
	tasks := 2 * 730 * (4*0.04 + 8*0.004)
	// Idle: the hours alone.
	near(t, "idle", m.Monthly(c, 0, 1), tasks+730*0.02)
	// 50 new connections a second is 2 LCU, above 50 x 10 s active / 3,000 and 1.8 GB an hour.
	n := 50.0 * 730 * 3600
	near(t, "busy", m.Monthly(c, n, 10), tasks+730*0.02+730*2*0.01)
}

func TestBreakEvenIsWhereTheCostsMeet(t *testing.T) {
	m := Model{Prices: testPrices, Measured: testMeasured(), Assumptions: DefaultAssumptions}
	p := Profile{Scenario: ScenarioChat, ModelSeconds: 1, Requests: 1}
	c := Container{Tasks: 2, VCPU: 1, GB: 2, BytesPerReq: 1e4, KeepAliveReqs: 1}
	for _, s := range []Size{{PlatformLambda, 512, 0.29, 1}, {PlatformGCF, 128, 0.083, 1}} {
		n, err := m.BreakEven(p, s, Features{}, c)
		if err != nil || n == 0 {
			t.Fatalf("%v: %v, %v", s, n, err)
		}
		b, _ := m.PerRequest(p, s, Features{}, n)
		fn, box := b.Total()*n, m.Monthly(c, n, 1)
		if math.Abs(fn-box)/box > 0.01 {
			t.Errorf("%v at %.0f a month: functions USD %.2f, containers USD %.2f", s, n, fn, box)
		}
	}
}

func TestChoose(t *testing.T) {
	fig := func(mb int, add, p99, spread float64) Figure {
		return Figure{Platform: PlatformLambda, MemoryMB: mb, VCPU: float64(mb) / 1769, Concurrency: 1, Scenario: ScenarioChat,
			AddedMs: add, AddedP99Ms: p99, AddedSpreadMs: spread, AddedP99SpreadMs: spread}
	}
	for _, tc := range []struct {
		name string
		figs []Figure
		want int
	}{
		{"the smallest within 10%", []Figure{fig(128, 1.5, 2, 0), fig(256, 1.05, 1.1, 0), fig(512, 1, 1, 0)}, 256},
		{"p99 counts", []Figure{fig(128, 1, 9, 0), fig(256, 1, 1.2, 0), fig(512, 1, 1, 0)}, 512},
		{"inside the largest's spread", []Figure{fig(128, 1.3, 1.3, 0), fig(512, 1, 1, 0.5)}, 128},
		{"p50 inside its own spread", []Figure{fig(128, 1.4, 1.05, 0.4), fig(512, 1, 1, 0)}, 128},
		{"p99 not inside its own spread", []Figure{fig(128, 1, 1.4, 0.4), fig(512, 1, 1, 0)}, 512},
		{"beyond both spreads", []Figure{fig(128, 1.8, 1.8, 0.3), fig(512, 1, 1, 0.3)}, 512},
		{"only the largest", []Figure{fig(128, 3, 3, 0), fig(512, 1, 1, 0.1)}, 512},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Measured{Figures: tc.figs}.Choose(PlatformLambda, 1)
			if err != nil {
				t.Fatal(err)
			}
			if c.Size.MemoryMB != tc.want {
				t.Errorf("chose %v, want %d MB; refused %v", c.Size, tc.want, c.Refused)
			}
		})
	}
}

func TestMeasuredRefusals(t *testing.T) {
	for name, body := range map[string]string{
		"not JSON":         `{`,
		"no figures":       `{"figures":[]}`,
		"unknown platform": `{"figures":[{"platform":"azure","memory_mb":128,"vcpu":1,"concurrency":1,"scenario":"chat"}]}`,
		"no memory":        `{"figures":[{"platform":"lambda","vcpu":1,"concurrency":1,"scenario":"chat"}]}`,
		"negative CPU":     `{"figures":[{"platform":"lambda","memory_mb":128,"vcpu":1,"concurrency":1,"scenario":"chat","cpu_us":-1}]}`,
	} {
		if _, err := parseMeasured(name, []byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The committed run has every profile's scenario on every size at concurrency 1, so `fngate
// cost` and docs/cost.md have no hole, and a rule's choice for each template.
func TestEmbeddedRunIsComplete(t *testing.T) {
	m, err := DefaultMeasured()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range m.Sizes() {
		for _, p := range Profiles {
			if _, err := m.Figure(s.Platform, s.MemoryMB, s.Concurrency, p.Scenario); err != nil && (s.Concurrency == 1 || p.Scenario != ScenarioEmbeddings) {
				t.Error(err)
			}
		}
	}
	for _, pc := range []struct {
		platform string
		conc     int
	}{{PlatformLambda, 1}, {PlatformGCF, 1}, {PlatformGCF, 80}} {
		if _, err := m.Choose(pc.platform, pc.conc); err != nil {
			t.Errorf("%s at %d: %v", pc.platform, pc.conc, err)
		}
	}
}
