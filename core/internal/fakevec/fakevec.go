// Package fakevec makes the deterministic vectors the mock provider and the fake upstreams
// answer embeddings with (the fakes through mock.Embedding, as they live outside core): the
// same input and length give the same vector everywhere, so a test can say what a route must
// have returned.
package fakevec

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
)

// Unit is the vector of input: dims numbers drawn from a generator seeded with the input's
// hash, scaled to unit length (as the real models' vectors are). A shorter vector of the same
// input starts like a longer one before scaling, as a shortenable model's does.
func Unit(input string, dims int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(input))
	r := rand.New(rand.NewPCG(h.Sum64(), 0x656d626564))
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		x := r.Float64()*2 - 1
		v[i] = float32(x)
		norm += x * x
	}
	if norm == 0 {
		return v
	}
	scale := 1 / math.Sqrt(norm)
	for i := range v {
		v[i] = float32(float64(v[i]) * scale)
	}
	return v
}
