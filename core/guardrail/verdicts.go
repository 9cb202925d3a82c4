package guardrail

import (
	"crypto/sha256"
	"sync"
)

// The verdict cache. Agents resend their whole history every turn, and the cloud services
// meter every character they are sent: a text (a message, a tool result) checked once is not
// sent again while its verdict is remembered, so each turn costs only what is new. Verdicts
// are kept by the SHA-256 of the direction and the text, per guard, in memory: a pass costs
// 48 bytes, a mask keeps the masked text, bounded in total.
type verdicts struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]cachedVerdict
	order   [][sha256.Size]byte // insertion order: the oldest is evicted first
	head    int
	bytes   int
	maxN    int
	maxB    int
}

// cachedVerdict is a text's remembered verdict: passed (masked nil) or masked.
type cachedVerdict struct {
	masked     *string
	categories []string
}

const (
	defaultVerdictEntries = 16384
	defaultVerdictBytes   = 16 << 20
)

func newVerdicts(maxEntries, maxBytes int) *verdicts {
	return &verdicts{entries: make(map[[sha256.Size]byte]cachedVerdict), maxN: maxEntries, maxB: maxBytes}
}

func verdictKey(src Source, text string) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte{byte(src)})
	h.Write([]byte(text))
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// imageKey is an image's key: its format and bytes under a direction byte no text's key
// starts with.
func imageKey(src Source, im Image) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte{0x80 | byte(src)})
	h.Write([]byte(im.Format))
	h.Write([]byte{0})
	h.Write(im.Data)
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// getImage reports whether im passed before; v may be nil (no cache).
func (v *verdicts) getImage(src Source, im Image) (cachedVerdict, bool) {
	if v == nil {
		return cachedVerdict{}, false
	}
	return v.getKey(imageKey(src, im))
}

// putImage remembers that im passed.
func (v *verdicts) putImage(src Source, im Image) {
	v.putKey(imageKey(src, im), cachedVerdict{}, sha256.Size+16)
}

func (v *verdicts) get(src Source, text string) (cachedVerdict, bool) {
	return v.getKey(verdictKey(src, text))
}

func (v *verdicts) getKey(k [sha256.Size]byte) (cachedVerdict, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	cv, ok := v.entries[k]
	return cv, ok
}

func (v *verdicts) put(src Source, text string, cv cachedVerdict) {
	size := sha256.Size + 16
	if cv.masked != nil {
		size += len(*cv.masked)
	}
	if size > v.maxB/16 {
		return // one text may not take a sixteenth of the cache
	}
	v.putKey(verdictKey(src, text), cv, size)
}

func (v *verdicts) putKey(k [sha256.Size]byte, cv cachedVerdict, size int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.entries[k]; ok {
		return
	}
	for len(v.entries) > 0 && (len(v.entries) >= v.maxN || v.bytes+size > v.maxB) {
		v.evictOldest()
	}
	v.entries[k] = cv
	v.bytes += size
	v.order = append(v.order, k)
}

func (v *verdicts) evictOldest() {
	k := v.order[v.head]
	v.head++
	if cv, ok := v.entries[k]; ok {
		v.bytes -= sha256.Size + 16
		if cv.masked != nil {
			v.bytes -= len(*cv.masked)
		}
		delete(v.entries, k)
	}
	if v.head > len(v.order)/2 && v.head > 1024 {
		v.order = append([][sha256.Size]byte(nil), v.order[v.head:]...)
		v.head = 0
	}
}
