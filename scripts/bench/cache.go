package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/fngate/fngate/core/awsconf"
	"github.com/fngate/fngate/core/responsecache"
	"github.com/fngate/fngate/core/responsecache/dynamostore"
	"github.com/fngate/fngate/scripts/internal/proc"
)

// cacheConfig is the gateway of the response cache's scenarios: one model without a cache
// and one with, on the memory store (its round trip is nothing, so the figures are the
// gateway's own work: the request's digest, the look-up, the recording and the write; a
// DynamoDB or Firestore store adds its round trip to a miss, a few milliseconds in region),
// each on the upstream that answers at once and on the one that thinks 50 ms first.
const cacheConfig = `
limits: {max_in_flight: 5000}
auth: none
response_cache: {store: memory}
connections:
  up: {kind: openai-compatible, base_url: "http://%s/v1"}
  slow: {kind: openai-compatible, base_url: "http://%s/v1"}
models:
  bench/uncached: {routes: [{connection: up, model: bench}]}
  bench/cached: {cache: {ttl: 1h}, routes: [{connection: up, model: bench}]}
  bench/slow-uncached: {routes: [{connection: slow, model: bench}]}
  bench/slow-cached: {cache: {ttl: 1h}, routes: [{connection: slow, model: bench}]}
`

// uniqueChatWire is chatWire with a prompt no other request has: every request is a miss.
var uniqueChatWire = wire{chatWire.path, func(model string, stream bool) string {
	return strings.Replace(chatWire.body(model, stream), prompt, prompt+" (request "+requestMarker+")", 1)
}, chatWire.done}

// streamedChatWire is chatWire with a prompt of its own, for the streamed hit: the
// benchmark's upstream answers a stream with other text than a whole answer, and the two hit
// targets must not share an entry (a miss target fills the memory store, which then evicts
// entries, so either may be recorded again in the other form).
var streamedChatWire = wire{chatWire.path, func(model string, stream bool) string {
	return strings.Replace(chatWire.body(model, stream), prompt, prompt+" (streamed)", 1)
}, chatWire.done}

// cache compares, side by side, the gateway without a cache, a miss (a request never seen,
// looked up, answered upstream, recorded and written) and a hit (the same request again),
// streamed and not, and on an upstream that thinks 50 ms: what a hit saves.
func (b *bench) cache(tmp, gwBin, upAddr, holdAddr string) error {
	if b.opt.only != nil && !b.opt.only.MatchString("cache") {
		return nil
	}
	addr := proc.FreeAddr()
	gw, err := proc.Start("gateway-cache", filepath.Join(tmp, "gateway-cache.log"), gwBin, "-config", writeConfig(tmp, "cache.yaml", fmt.Sprintf(cacheConfig, upAddr, holdAddr)), "-addr", addr, "-route-state", "off")
	if err != nil {
		return err
	}
	defer gw.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := proc.WaitListening(ctx, addr); err != nil {
		return err
	}
	base, pid := "http://"+addr, gw.Cmd.Process.Pid
	targets := func(prefix, upstream string, hit wire) []target {
		return []target{{"direct", "http://" + upstream, "bench", 0, uniqueChatWire, ""},
			{"fngate, cache off", base, prefix + "uncached", pid, uniqueChatWire, ""},
			{"fngate, cache miss", base, prefix + "cached", pid, uniqueChatWire, ""},
			{"fngate, cache hit", base, prefix + "cached", pid, hit, ""},
		}
	}
	for _, w := range []struct {
		wire   wire
		model  string
		stream bool
	}{{chatWire, "bench/cached", false}, {chatWire, "bench/slow-cached", false}, {streamedChatWire, "bench/cached", true}} {
		if err := warm(b.client, base, w.model, w.wire, w.stream); err != nil {
			return err
		}
	}
	for _, c := range []int{1, 16} {
		b.measure(scenario{fmt.Sprintf("cache off vs miss vs hit, non-stream, %d in flight", c), c, false, targets("bench/", upAddr, chatWire)})
	}
	b.measure(scenario{"cache off vs miss vs hit, 200-chunk stream, 1 in flight", 1, true, targets("bench/", upAddr, streamedChatWire)})
	b.measure(scenario{"cache off vs miss vs hit, upstream thinks 50 ms, non-stream, 16 in flight", 16, false, targets("bench/slow-", holdAddr, chatWire)})
	return b.cacheDynamo(tmp, gwBin, upAddr)
}

// warm asks the hit targets' request once, so that their first measured request is a hit,
// and waits until the answer is cached.
func warm(client *http.Client, base, model string, w wire, stream bool) error {
	for range 50 {
		req, err := http.NewRequest(http.MethodPost, base+w.path, strings.NewReader(w.body(model, stream)))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.Header.Get("X-Fngate-Cache") == "hit" {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("warming the cache for %s: no hit after 50 requests", model)
}

// cacheDynamoConfig is cacheConfig's fast pair of models on a DynamoDB table (moto_server's,
// on this machine), under a timeout that moto's slowest answers under load stay within: a
// look-up that timed out would be a cheap miss and flatter the figures.
const cacheDynamoConfig = `
limits: {max_in_flight: 5000}
auth: none
response_cache: {store: dynamodb, table: %s, timeout: 5s}
connections:
  up: {kind: openai-compatible, base_url: "http://%s/v1"}
models:
  bench/uncached: {routes: [{connection: up, model: bench}]}
  bench/cached: {cache: {ttl: 1h}, routes: [{connection: up, model: bench}]}
`

// cacheDynamo measures what issue 27 bounds: a miss's cost with the cache on over the cache
// off must not exceed the store's round trip. One gateway on a DynamoDB table served by
// moto_server (skipped, with a note, when moto_server is not on PATH) carries the cache off,
// a miss and a hit; beside them, the store's own look-up of a key it does not hold (the
// gateway's dynamostore and HTTP client, from this process, at the same concurrency), in
// rounds after the scenario's.
func (b *bench) cacheDynamo(tmp, gwBin, upAddr string) error {
	if b.opt.only != nil && !b.opt.only.MatchString("cache") {
		return nil
	}
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		b.notes = append(b.notes, "the response cache on DynamoDB was not measured: moto_server is not on PATH (pip install 'moto[server]')")
		return nil
	}
	motoAddr := proc.FreeAddr()
	host, port, _ := net.SplitHostPort(motoAddr)
	moto, err := proc.Start("moto_server", filepath.Join(tmp, "moto.log"), bin, "-H", host, "-p", port)
	if err != nil {
		return err
	}
	defer moto.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := proc.WaitListening(ctx, motoAddr); err != nil {
		return err
	}
	endpoint := "http://" + motoAddr
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), HTTPClient: awsconf.HTTPClient(),
		Credentials: credentials.NewStaticCredentialsProvider("bench", "bench", "")})
	const table = "fngate-bench-cache"
	if err := dynamostore.CreateTable(ctx, db, table); err != nil {
		return err
	}
	addr := proc.FreeAddr()
	env := []string{"AWS_ENDPOINT_URL=" + endpoint, "AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=bench", "AWS_SECRET_ACCESS_KEY=bench", "AWS_SESSION_TOKEN="}
	gwLog := filepath.Join(tmp, "gateway-cache-dynamodb.log")
	gw, err := proc.StartEnv("gateway-cache-dynamodb", gwLog, env, gwBin,
		"-config", writeConfig(tmp, "cache-dynamodb.yaml", fmt.Sprintf(cacheDynamoConfig, table, upAddr)), "-addr", addr, "-route-state", "off")
	if err != nil {
		return err
	}
	defer gw.Stop()
	if err := proc.WaitListening(ctx, addr); err != nil {
		return err
	}
	base, pid := "http://"+addr, gw.Cmd.Process.Pid
	if err := warm(b.client, base, "bench/cached", chatWire, false); err != nil {
		return err
	}
	store := dynamostore.New(db, table, dynamostore.Options{Timeout: 5 * time.Second})
	// Paced: moto_server serves one call at a time, so back to back a miss's look-up waits for
	// the write the miss before it left behind (off the request path, not off moto's queue). A
	// client that waits between requests, as one user does, lets the write end first: that
	// row is the look-up's own cost, which a store serving calls concurrently gives every row.
	for _, run := range []struct {
		c   int
		gap time.Duration
	}{{1, 0}, {1, 25 * time.Millisecond}, {16, 0}} {
		c := run.c
		label := fmt.Sprintf("cache on DynamoDB (moto_server): off vs miss vs hit, non-stream, %d in flight", c)
		if run.gap > 0 {
			label += fmt.Sprintf(", %v between a client's requests", run.gap)
		}
		b.gap = run.gap
		logFrom := fileSize(gwLog)
		st := b.measure(scenario{label, c, false, []target{{"direct", "http://" + upAddr, "bench", 0, uniqueChatWire, ""},
			{"fngate, cache off", base, "bench/uncached", pid, uniqueChatWire, ""},
			{"fngate, cache miss", base, "bench/cached", pid, uniqueChatWire, ""},
			{"fngate, cache hit", base, "bench/cached", pid, chatWire, ""},
		}})
		b.gap = 0
		if st == nil {
			continue
		}
		trip := b.storeRoundTrip(store, label, c, false)
		both := b.storeRoundTrip(store, label, c, true)
		off, miss := median(st[1].addP50), median(st[2].addP50)
		inGateway := lookupTimes(gwLog, logFrom)
		b.notes = append(b.notes, fmt.Sprintf("%s: a miss adds %s ms at p50 over the cache off (added p50 %s vs %s ms); the gateway's own look-ups on those misses (cache_lookup_ms of its request lines, %d of them) took %s ms at p50, so the miss's cost beyond its store round trip is %s ms; the store's look-up alone from the bench's process takes %s ms at p50 (%s..%s over the rounds), its look-up and write of the entry %s ms (%s..%s)",
			label, msf(miss-off), msf(miss), msf(off), len(inGateway), msf(pct(inGateway, .5)), msf(miss-off-pct(inGateway, .5)), msf(median(trip)), msf(slices.Min(trip)), msf(slices.Max(trip)), msf(median(both)), msf(slices.Min(both)), msf(slices.Max(both))))
	}
	return nil
}

// storeRoundTrip times the store's look-up of keys it does not hold, conc at a time, for
// the bench's rounds, adds a row beside the scenario's and returns each round's p50. With
// write, each look-up is followed by the write of an entry of a bench answer's size under
// its key: all a miss asks of the store, as one client's calls in a row, since a store that
// serves one call at a time (moto_server) makes a miss's look-up wait for the write of the
// miss before it.
func (b *bench) storeRoundTrip(store *dynamostore.Store, label string, conc int, write bool) []time.Duration {
	name := "the store's look-up alone (GetItem of a key not held)"
	if write {
		name = "the store's look-up and write of a miss (GetItem, then PutItem of 2 KB)"
	}
	body := []byte(strings.Repeat("x", 2<<10))
	var pooled []time.Duration
	var p50s []time.Duration
	var errs int
	var elapsed time.Duration
	for range b.opt.rounds {
		var mu sync.Mutex
		var lat []time.Duration
		start := time.Now()
		deadline := start.Add(b.opt.phase)
		var wg sync.WaitGroup
		for range conc {
			wg.Go(func() {
				for time.Now().Before(deadline) {
					key := fmt.Sprintf("%064x.%064x", requestSeq.Add(1), 0)
					t0 := time.Now()
					_, err := store.Get(context.Background(), key)
					if write && errors.Is(err, responsecache.ErrNotFound) {
						now := time.Now()
						if perr := store.Put(context.Background(), &responsecache.Entry{Key: key, Model: "bench/cached", Created: now, Expires: now.Add(time.Hour), Body: body}); perr != nil {
							err = perr
						}
					}
					d := time.Since(t0)
					mu.Lock()
					if errors.Is(err, responsecache.ErrNotFound) {
						lat = append(lat, d)
					} else {
						errs++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		elapsed += time.Since(start)
		pooled = append(pooled, lat...)
		p50s = append(p50s, pct(lat, .5))
	}
	rps := float64(len(pooled)) / elapsed.Seconds()
	b.rows = append(b.rows, []string{label, name, msf(pct(pooled, .5)), msf(pct(pooled, .99)),
		strconv.FormatFloat(rps, 'f', 0, 64), "", "", "", strconv.Itoa(errs)})
	return p50s
}

// fileSize is the size of the file at path, 0 when it cannot be read.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// lookupTimes reads the gateway's request lines written to its log past offset from and
// returns the look-up times (cache_lookup_ms) of its misses: the store's round trip as the
// gateway saw it, under the scenario's own load.
func lookupTimes(path string, from int64) []time.Duration {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil
	}
	var out []time.Duration
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg    string   `json:"msg"`
			Cache  string   `json:"cache"`
			Lookup *float64 `json:"cache_lookup_ms"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Msg != "request" || line.Cache != "miss" || line.Lookup == nil {
			continue
		}
		out = append(out, time.Duration(*line.Lookup*1e6))
	}
	return out
}
