package replica_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fngate/fngate/core/config"
	"github.com/fngate/fngate/core/counters"
	"github.com/fngate/fngate/core/gateway"
	"github.com/fngate/fngate/core/internal/replica"
	"github.com/fngate/fngate/core/keystore"
	"github.com/fngate/fngate/core/providers"
	"github.com/fngate/fngate/core/providers/mock"
	"github.com/fngate/fngate/internal/gatewaytest"
)

// The simulation's deployment: three regions, each a gateway on its own replica of the
// shared tables, replicas a delay apart (DynamoDB global tables replicate in about a second;
// the simulation scales that down to keep the test short; the bounds scale with it).
var regions = []string{"us-east-1", "us-west-2", "eu-west-1"}

const (
	delay     = 100 * time.Millisecond
	limit     = 200 // requests per minute of the key app
	appKey    = "sk-across-regions-app"
	chatBody  = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	perClient = 50                    // requests each client sends
	clients   = 4                     // per region
	pace      = 20 * time.Millisecond // between one client's requests
)

func gatewayConfig(t *testing.T, region, extra string) *config.Config {
	return gatewaytest.Config(t, `
keys:
  - {name: app, value: `+appKey+`, rate: {requests_per_minute: `+fmt.Sprint(limit)+`}}
connections: {mock: {kind: mock}}
models:
  m: {max_output_tokens: 16, routes: [{connection: mock, model: echo}]}
region: {name: `+region+`, regions: [`+strings.Join(regions, ", ")+`]}
`+extra, config.Options{Getenv: func(string) string { return "" }})
}

func serve(t *testing.T, cfg *config.Config, opt gateway.Options) *gatewaytest.Server {
	opt.Registry = providers.Registry{}
	mock.Register(opt.Registry)
	opt.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	opt.Metrics = io.Discard
	return gatewaytest.Serve(t, cfg, opt)
}

// post sends one chat request with the key and returns the status (0 when it could not be sent).
func post(url, key string) int {
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(chatBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// admissions records when each region's store admitted a take: the moments the bound is
// computed from.
type admissions struct {
	mu   sync.Mutex
	when [][]time.Time // per region
}

type recording struct {
	counters.Store
	a      *admissions
	region int
}

func (r recording) Take(ctx context.Context, key string, w counters.Windows, amounts []counters.Amount) (counters.Counts, bool, error) {
	c, ok, err := r.Store.Take(ctx, key, w, amounts)
	if ok && err == nil {
		r.a.mu.Lock()
		r.a.when[r.region] = append(r.a.when[r.region], time.Now())
		r.a.mu.Unlock()
	}
	return c, ok, err
}

// window counts the admissions of regions other than r in (t-d, t].
func (a *admissions) window(r int, t time.Time, d time.Duration) int {
	n := 0
	for s, ts := range a.when {
		for _, x := range ts {
			if s != r && x.After(t.Add(-d)) && !x.After(t) {
				n++
			}
		}
	}
	return n
}

// last returns the region and time of the last admission.
func (a *admissions) last() (int, time.Time) {
	r, t := -1, time.Time{}
	for s, ts := range a.when {
		for _, x := range ts {
			if x.After(t) {
				r, t = s, x
			}
		}
	}
	return r, t
}

// hammer drives every region's gateway at once and returns the requests admitted.
func hammer(t *testing.T, urls []string) int {
	var mu sync.Mutex
	admitted := 0
	var wg sync.WaitGroup
	for _, url := range urls {
		for range clients {
			wg.Go(func() {
				for range perClient {
					switch st := post(url, appKey); st {
					case http.StatusOK:
						mu.Lock()
						admitted++
						mu.Unlock()
					case http.StatusTooManyRequests:
					default:
						t.Errorf("%s answered %d; want 200 or 429", url, st)
						return
					}
					time.Sleep(pace)
				}
			})
		}
	}
	wg.Wait()
	return admitted
}

// minuteStart waits, when the current minute has too little left for a run, for the next one:
// a minute that rolls over during the run would admit a second minute's worth.
func minuteStart(t *testing.T) {
	if left := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); left < 10*time.Second {
		t.Logf("waiting %v for the next minute", left)
		time.Sleep(left + 100*time.Millisecond)
	}
}

// TestAcrossRegionsLimitOvershootStaysWithinBound runs the three regions under concurrent load
// in each counting mode. per_region may admit past the limit what the other regions admitted
// within one replication delay before the last admission, and never more than (regions-1) x
// the limit (docs/design.md, "Across regions"); home is exact; one_item on a last-writer-wins
// table loses increments, which is why it is not the mode for DynamoDB global tables.
func TestAcrossRegionsLimitOvershootStaysWithinBound(t *testing.T) {
	for _, mode := range []string{config.AcrossPerRegion, config.AcrossHome, config.AcrossOneItem} {
		t.Run(mode, func(t *testing.T) {
			minuteStart(t)
			link := &replica.Link{Delay: delay}
			table := replica.NewCounters(link, len(regions))
			rec := &admissions{when: make([][]time.Time, len(regions))}
			var urls []string
			for i, name := range regions {
				extra := "counters: {store: memory, across_regions: " + mode + "}"
				if mode == config.AcrossHome {
					extra = "counters: {store: dynamodb, table: fngate-counters, region: us-east-1, across_regions: home}"
				}
				cfg := gatewayConfig(t, name, extra)
				var s counters.Store = table.Replica(i)
				switch mode {
				case config.AcrossPerRegion:
					s = counters.NewRegional(s, cfg.Counters.Here, cfg.Counters.Regions)
				case config.AcrossHome:
					s = table.Replica(0) // every region counts in the home region's replica
				}
				urls = append(urls, serve(t, cfg, gateway.Options{Counters: recording{Store: s, a: rec, region: i}}).URL)
			}
			admitted := hammer(t, urls)
			link.Settle()
			over := admitted - limit
			r, last := rec.last()
			// A replicated write lands a little after the delay (timers, the scheduler under
			// -race): the window is the delay and that slack.
			window := rec.window(r, last, delay+50*time.Millisecond)
			t.Logf("%s: %d admitted on a limit of %d across %d regions (overshoot %d); the other regions admitted %d within one delay (%v) before the last admission",
				mode, admitted, limit, len(regions), over, window, delay)
			switch mode {
			case config.AcrossPerRegion:
				if over < 0 || over > window || over > (len(regions)-1)*limit {
					t.Fatalf("per_region overshoot %d; want 0 to %d (the other regions' admissions within one delay), at most %d", over, window, (len(regions)-1)*limit)
				}
			case config.AcrossHome:
				if over != 0 {
					t.Fatalf("home admitted %d on a limit of %d; want exactly the limit", admitted, limit)
				}
			case config.AcrossOneItem:
				if admitted < limit {
					t.Fatalf("one_item admitted %d, fewer than the limit %d", admitted, limit)
				}
			}
		})
	}
}

// TestAcrossRegionsRevocationReachesEveryRegionWithinBound revokes a stored key in one region
// and measures when each region's gateway stops serving it: within the replication delay plus
// the key cache's freshness bound (keysFreshFor, 5 s), and in practice within the delay plus
// one background read (2 s).
func TestAcrossRegionsRevocationReachesEveryRegionWithinBound(t *testing.T) {
	const revokeDelay = 300 * time.Millisecond
	bound := revokeDelay + 5*time.Second + time.Second // + the read's own time, under -race
	link := &replica.Link{Delay: revokeDelay}
	keys := replica.NewKeys(link, len(regions))
	ctx := context.Background()
	secret, hash := keystore.NewSecret()
	now := time.Now()
	k := &keystore.Key{Key: config.Key{ID: keystore.NewID(), Name: "traveller", Hash: hash}, Created: now, Updated: now}
	if err := keys.Replica(0).Create(ctx, k, nil); err != nil {
		t.Fatal(err)
	}
	link.Settle()
	var urls []string
	for i, name := range regions {
		cfg := gatewayConfig(t, name, "key_store: {store: memory}")
		g := serve(t, cfg, gateway.Options{KeyStore: keys.Replica(i)})
		t.Cleanup(g.Gateway.Close)
		urls = append(urls, g.URL)
		if st := post(g.URL, secret); st != http.StatusOK {
			t.Fatalf("%s: the stored key got %d before its revocation; want 200", name, st)
		}
	}
	revoked, err := keys.Replica(0).Get(ctx, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	revoked.Deleted, revoked.Version, revoked.Updated = true, revoked.Version+1, time.Now()
	at := time.Now()
	if err := keys.Replica(0).Update(ctx, revoked, nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	took := make([]time.Duration, len(regions))
	for i, url := range urls {
		wg.Go(func() {
			for time.Since(at) < bound+time.Second {
				if st := post(url, secret); st == http.StatusUnauthorized {
					took[i] = time.Since(at)
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
			took[i] = -1
		})
	}
	wg.Wait()
	for i, d := range took {
		t.Logf("%s stopped serving the revoked key after %v (bound %v)", regions[i], d.Round(time.Millisecond), bound)
		if d < 0 || d > bound {
			t.Errorf("%s: the revoked key still worked %v after its revocation; want refused within %v", regions[i], bound+time.Second, bound)
		}
	}
}

// TestAcrossRegionsResidencyPinnedKeyRefusedOutsideIt: a key pinned to eu is served by the EU
// region and refused, before any route is tried, by a US region's gateway.
func TestAcrossRegionsResidencyPinnedKeyRefusedOutsideIt(t *testing.T) {
	yaml := func(region, residency string) string {
		return `
keys:
  - {name: eu-app, value: sk-eu-app, residency: eu}
  - {name: any, value: sk-any}
connections: {mock: {kind: mock}}
models:
  m: {max_output_tokens: 16, routes: [{connection: mock, model: echo, residency: eu}, {connection: mock, model: echo, residency: us}]}
region: {name: ` + region + `, residency: ` + residency + `}
`
	}
	for _, c := range []struct {
		region, residency string
		key               string
		want              int
	}{
		{"eu-west-1", "eu", "sk-eu-app", http.StatusOK},
		{"us-east-1", "us", "sk-eu-app", http.StatusForbidden},
		{"us-east-1", "us", "sk-any", http.StatusOK},
	} {
		g := serve(t, gatewaytest.Config(t, yaml(c.region, c.residency), config.Options{Getenv: func(string) string { return "" }}), gateway.Options{})
		r := g.Chat(t, chatBody, "Authorization", "Bearer "+c.key)
		if r.Status != c.want {
			t.Fatalf("%s (%s) answered %d to %s; want %d: %s", c.region, c.residency, r.Status, c.key, c.want, r.Body)
		}
		if c.want == http.StatusForbidden {
			if code := r.ErrorObject(t)["code"]; code != gateway.CodeResidencyMismatch {
				t.Fatalf("the refusal's code is %v; want %s", code, gateway.CodeResidencyMismatch)
			}
		}
	}
}
