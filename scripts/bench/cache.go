package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

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
	return nil
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
