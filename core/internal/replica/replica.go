// Package replica models stores replicated across regions the way DynamoDB global tables
// replicate, for the across-regions simulation (docs/design.md, "Across regions"): each region
// reads and writes its own replica, every write reaches the other replicas after a delay, and
// per item the last writer wins, whatever the replica it arrives at holds meanwhile.
//
//	replica.go   Link, the delayed delivery between replicas
//	counters.go  Counters: a counters.Store table in replicas over counters.Memory
//	keys.go      Keys: a keystore.Store table in replicas over keystore.Memory
package replica

import (
	"sync"
	"time"
)

// Link delivers what one replica wrote to the others after Delay.
type Link struct {
	Delay time.Duration

	wg sync.WaitGroup
}

// after runs f once Delay has passed.
func (l *Link) after(f func()) {
	l.wg.Add(1)
	time.AfterFunc(l.Delay, func() {
		defer l.wg.Done()
		f()
	})
}

// Settle waits until every write made so far has reached every replica.
func (l *Link) Settle() { l.wg.Wait() }
