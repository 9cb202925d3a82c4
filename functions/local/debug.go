package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
)

// serveDebug exposes profiles and the figures `make soak` watches for leaks, on a separate
// listener so they can never be reached through the gateway's address.
func serveDebug(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/fngate", func(w http.ResponseWriter, _ *http.Request) {
		// A collection first, so heap figures compare live data rather than garbage.
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		_ = json.NewEncoder(w).Encode(map[string]uint64{
			"goroutines":    uint64(runtime.NumGoroutine()),
			"heap_inuse":    ms.HeapInuse,
			"heap_objects":  ms.HeapObjects,
			"heap_sys":      ms.HeapSys,
			"heap_released": ms.HeapReleased,
			"stack_inuse":   ms.StackInuse,
			"sys":           ms.Sys,
			"total_alloc":   ms.TotalAlloc,
			"num_gc_cycles": uint64(ms.NumGC),
		})
	})
	go func() { _ = http.Serve(ln, mux) }()
	return nil
}
