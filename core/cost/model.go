package cost

import (
	"fmt"
	"math"
)

// Profile is a kind of traffic a user recognises: what one unit of it asks of the gateway.
type Profile struct {
	Name  string // the flag value: json, stream, embeddings, claude-code
	Title string
	// Scenario is the benchmark's load that stands for its requests.
	Scenario string
	// ModelSeconds is the upstream's time per request: what a function waits for, billed.
	ModelSeconds float64
	// Requests is how many requests one unit is (a Claude Code session is many).
	Requests int
	// ItemKB is what a stored response or a cached answer of one request weighs.
	ItemKB float64
	// LogBytes is what the gateway logs per request (the request line and one attempt line).
	LogBytes float64
	// Stored: the door keeps the answer (Responses with store: true, Codex's default).
	Stored bool
}

// logBytes is what one request writes to the platform's logs: the request and attempt lines
// of a chat request on the local server measured 715 bytes together; a keyed, priced request
// adds its key and cost fields (about 120), and Lambda its START, END and REPORT lines (about
// 260).
const logBytes = 1100

// Profiles are the defaults docs/cost.md shows; `fngate cost` can change each figure.
var Profiles = []Profile{
	{Name: "json", Title: "a 1 s JSON answer (chat, non-stream)", Scenario: ScenarioChat, ModelSeconds: 1, Requests: 1, ItemKB: 3, LogBytes: logBytes},
	{Name: "stream", Title: "a 10 s stream (chat)", Scenario: ScenarioChatStream, ModelSeconds: 10, Requests: 1, ItemKB: 6, LogBytes: logBytes},
	{Name: "embeddings", Title: "an embeddings batch (16 x 1,536 floats, 0.3 s)", Scenario: ScenarioEmbeddings, ModelSeconds: 0.3, Requests: 1, ItemKB: 100, LogBytes: logBytes},
	{Name: "claude-code", Title: "a Claude Code session (40 Messages streams of 8 s)", Scenario: ScenarioMessagesStream, ModelSeconds: 8, Requests: 40, ItemKB: 8, LogBytes: logBytes},
	{Name: "codex", Title: "a Codex session (30 Responses streams of 8 s, stored)", Scenario: ScenarioResponsesStream, ModelSeconds: 8, Requests: 30, ItemKB: 30, LogBytes: logBytes, Stored: true},
}

// ProfileNamed finds a profile by name.
func ProfileNamed(name string) (Profile, error) {
	for _, p := range Profiles {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("no profile %q", name)
}

// Features are the gateway's functions that read and write the shared stores per request.
type Features struct {
	Limits     bool    // a key's rate and budget counters: an admission and a settle
	History    bool    // usage per key and day for the console and `fngate usage`
	StoredKeys bool    // keys from the key store: a changes query every 2 s an instance serves
	Cache      bool    // the response cache: a lookup, and on a miss a write
	CacheHits  float64 // the share of cached requests that hit (0..1)
}

// Size is one function size the benchmark measured.
type Size struct {
	Platform    string
	MemoryMB    int
	VCPU        float64
	Concurrency int
}

func (s Size) String() string {
	if s.Platform == PlatformLambda {
		return fmt.Sprintf("Lambda %d MB", s.MemoryMB)
	}
	c := ""
	if s.Concurrency > 1 {
		c = fmt.Sprintf(", concurrency %d", s.Concurrency)
	}
	return fmt.Sprintf("Cloud Functions %g vCPU / %d MiB%s", s.VCPU, s.MemoryMB, c)
}

// Assumptions are the model's inputs that are neither prices nor measurements.
type Assumptions struct {
	// ColdShare is the share of requests that start an instance (and pay its start).
	ColdShare float64
	// CPUTarget and ConcurrencyTarget are where Cloud Run's autoscaler adds instances: 60% of
	// CPU and of the maximum concurrency (cloud.google.com/run/docs/about-instance-autoscaling).
	CPUTarget, ConcurrencyTarget float64
}

// DefaultAssumptions: 1% of requests cold (AWS: cold starts are under 1% of invocations of
// production workloads); Cloud Run's published targets.
var DefaultAssumptions = Assumptions{ColdShare: 0.01, CPUTarget: 0.6, ConcurrencyTarget: 0.6}

// Breakdown is dollars per request, by what is billed.
type Breakdown struct {
	Compute, Requests, Stores, Logs float64
}

// Total is the sum.
func (b Breakdown) Total() float64 { return b.Compute + b.Requests + b.Stores + b.Logs }

func (b Breakdown) scale(k float64) Breakdown {
	return Breakdown{b.Compute * k, b.Requests * k, b.Stores * k, b.Logs * k}
}

// Model holds what a cost is computed from.
type Model struct {
	Prices      Prices
	Measured    Measured
	Assumptions Assumptions
}

// seconds is how long a request holds its instance: the model's time and what the gateway
// adds to it (for a stream, to its first token: what comes after is paced by the model).
func seconds(p Profile, f Figure) float64 {
	added := f.AddedMs
	if isStream(p.Scenario) {
		added = f.AddedTTFTMs
	}
	return p.ModelSeconds + math.Max(added, 0)/1000
}

// PerRequest is the dollars one request of the profile costs on a size, at a month's volume
// of requests (Cloud Functions shares an instance's time among the requests it holds at
// once, which depends on how many arrive).
func (m Model) PerRequest(p Profile, s Size, feat Features, requestsPerMonth float64) (Breakdown, error) {
	f, err := m.Measured.Figure(s.Platform, s.MemoryMB, s.Concurrency, p.Scenario)
	if err != nil {
		return Breakdown{}, err
	}
	d := seconds(p, f)
	cold := m.Assumptions.ColdShare * f.ColdStartMs / 1000
	var b Breakdown
	var instanceSeconds float64 // instance time billed per request, for the key store's polls
	switch s.Platform {
	case PlatformLambda:
		// Billed per millisecond, rounded up, the start (INIT) too: a custom runtime's always
		// was, every runtime's since 2025-08.
		billed := math.Ceil((d+cold)*1000) / 1000
		b.Compute = billed * float64(s.MemoryMB) / 1024 * m.Prices.LambdaGBSecond
		b.Requests = m.Prices.LambdaRequest
		instanceSeconds = d
	case PlatformGCF:
		instanceSeconds = m.gcfInstanceSeconds(s, f, d, requestsPerMonth)
		rate := s.VCPU*m.Prices.RunVCPUSecond + float64(s.MemoryMB)/1024*m.Prices.RunGiBSecond
		b.Compute = (instanceSeconds + cold) * rate
		b.Requests = m.Prices.RunRequest
	default:
		return Breakdown{}, fmt.Errorf("unknown platform %q", s.Platform)
	}
	b.Stores = m.storeCost(s.Platform, p, feat, instanceSeconds)
	b.Logs = p.LogBytes / (1 << 30) * m.Prices.LogsIngestGB
	return b, nil
}

// gcfInstanceSeconds is the instance time one request is billed for. Request-based billing
// charges an instance while it serves at least one request, in 100 ms steps. With
// concurrency 1 that is the request's own time. Above 1, requests arriving at rate λ that
// each last d overlap: while one instance holds them all it is billed for the share of time
// at least one is in flight (1 - e^{-λd} for random arrivals), and once the autoscaler spreads
// them it keeps each instance at its target (60% of the concurrency, or of the CPU).
func (m Model) gcfInstanceSeconds(s Size, f Figure, d, requestsPerMonth float64) float64 {
	if s.Concurrency <= 1 {
		return math.Ceil(d*10) / 10
	}
	perInstance := m.Assumptions.ConcurrencyTarget * float64(s.Concurrency)
	if f.CPUMicros > 0 {
		// Requests in flight that keep the CPU at its target: CPU per second of a request's
		// life is CPU per request over its duration.
		perInstance = math.Min(perInstance, m.Assumptions.CPUTarget*s.VCPU/(f.CPUMicros/1e6/d))
	}
	perInstance = math.Max(perInstance, 1)
	lambda := requestsPerMonth / (HoursPerMonth * 3600)
	if lambda <= 0 {
		return d
	}
	inFlight := lambda * d
	busy := math.Max(1-math.Exp(-inFlight), inFlight/perInstance) // instances billed, on average
	return busy / lambda
}

// Store operations per request, by store, for each feature.
//
// DynamoDB on demand: an UpdateItem or PutItem costs a write unit per KB of the item, a
// GetItem a read unit per 4 KB (half of it eventually consistent), a Query at least half a read
// unit. Firestore: a document read or written is one operation, whatever its size.
func (m Model) storeCost(platform string, p Profile, feat Features, instanceSeconds float64) float64 {
	pr := m.Prices
	dyn := platform == PlatformLambda
	var usd float64
	writeN := func(n, kb float64) {
		if dyn {
			usd += n * math.Ceil(math.Max(kb, 1)) * pr.DynamoWRU
		} else {
			usd += n * pr.FirestoreWrite
		}
	}
	write := func(kb float64) { writeN(1, kb) }
	readN := func(n, kb float64, consistent bool) {
		if dyn {
			units := math.Ceil(math.Max(kb, 1) / 4)
			if !consistent {
				units /= 2
			}
			usd += n * units * pr.DynamoRRU
		} else {
			usd += n * pr.FirestoreRead
		}
	}
	read := func(kb float64, consistent bool) { readN(1, kb, consistent) }
	if feat.Limits {
		if dyn {
			write(1) // admission: one conditional UpdateItem on the key's item
			write(1) // settle: the tokens and dollars once the answer is in
		} else {
			for range firestoreShards {
				read(1, true) // the key's shards, summed
			}
			write(1)
			write(1)
		}
	}
	if feat.History {
		write(1) // one ADD to the key's day
	}
	if feat.StoredKeys {
		// The changes since the last read: a query on an index (eventually consistent) that
		// mostly finds nothing, every 2 s of an instance's serving time, shared by the
		// requests it serves at once.
		readN(instanceSeconds/keyPollSeconds, 0, false)
	}
	if p.Stored {
		write(p.ItemKB)      // the response, kept
		read(p.ItemKB, true) // and read back by the next turn's previous_response_id
	}
	if feat.Cache {
		read(p.ItemKB, false)
		writeN(1-feat.CacheHits, cacheItemKB(p.ItemKB)) // only a miss writes
	}
	return usd
}

const (
	// firestoreShards is firestorecounters.DefaultShards: an admission reads them all.
	firestoreShards = 8
	// keyPollSeconds is how often an instance that serves reads the key store's changes.
	keyPollSeconds = 2
)

// cacheItemKB is a cached answer's size on DynamoDB, which stores an answer as it is when it
// fits in an item (400 KB) and gzip-compressed when not (JSON compresses about 3:1).
func cacheItemKB(kb float64) float64 {
	if kb > 400 {
		return kb / 3
	}
	return kb
}

// Container is the always-on alternative: tasks of a peer gateway behind a load balancer.
type Container struct {
	Name          string
	Tasks         int
	VCPU, GB      float64
	BytesPerReq   float64 // through the load balancer, both ways
	KeepAliveReqs float64 // requests per new connection (1: every request connects)
}

// Containers are the peers docs/cost.md compares with: LiteLLM at the size its deployment
// guide gives as the production minimum (4 vCPU, 8 GB; docs.litellm.ai/docs/proxy/deploy), and
// a small Go gateway (1 vCPU, 2 GB) as the floor of what an always-on pair costs. Neither
// counts the database and Redis LiteLLM also wants.
var Containers = []Container{
	{Name: "LiteLLM, 2 Fargate tasks of 4 vCPU / 8 GB + ALB", Tasks: 2, VCPU: 4, GB: 8, BytesPerReq: 16 << 10, KeepAliveReqs: 1},
	{Name: "a small gateway, 2 Fargate tasks of 1 vCPU / 2 GB + ALB", Tasks: 2, VCPU: 1, GB: 2, BytesPerReq: 16 << 10, KeepAliveReqs: 1},
}

// Monthly is what the container option costs in a month carrying that many requests that
// each last seconds: the tasks and the load balancer's hours, and its capacity units (the
// largest of new connections, active connections and bytes an hour, per LCU).
func (m Model) Monthly(c Container, requestsPerMonth, seconds float64) float64 {
	pr := m.Prices
	hours := float64(HoursPerMonth)
	tasks := float64(c.Tasks) * hours * (c.VCPU*pr.FargateVCPUHour + c.GB*pr.FargateGBHour)
	perSecond := requestsPerMonth / (hours * 3600)
	lcu := max(
		perSecond/math.Max(c.KeepAliveReqs, 1)/25, // 25 new connections a second
		perSecond*seconds/3000,                    // 3,000 active connections a minute
		perSecond*3600*c.BytesPerReq/1e9,          // 1 GB an hour
	)
	return tasks + hours*pr.ALBHour + hours*lcu*pr.ALBLCUHour
}

// BreakEven is the monthly volume of requests above which the container costs less than the
// function size, or 0 when the function is cheaper up to a trillion requests a month.
func (m Model) BreakEven(p Profile, s Size, feat Features, c Container) (float64, error) {
	over := func(n float64) (bool, error) {
		b, err := m.PerRequest(p, s, feat, n)
		if err != nil {
			return false, err
		}
		return b.Total()*n > m.Monthly(c, n, p.ModelSeconds), nil
	}
	lo, hi := 1.0, 1e12
	if ok, err := over(hi); err != nil || !ok {
		return 0, err
	}
	if ok, _ := over(lo); ok {
		return lo, nil
	}
	for hi/lo > 1.001 {
		mid := math.Sqrt(lo * hi)
		ok, _ := over(mid)
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// Unit is the cost of one unit of the profile (a request, or a session of requests).
func (m Model) Unit(p Profile, s Size, feat Features, requestsPerMonth float64) (Breakdown, error) {
	b, err := m.PerRequest(p, s, feat, requestsPerMonth)
	return b.scale(float64(p.Requests)), err
}
