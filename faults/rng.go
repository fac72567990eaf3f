package faults

import (
	"math/bits"
	"math/rand/v2"
	"time"

	"github.com/frayproxy/fray/proxy/mcp"
)

// Rand is one fault's random source for one stream or exchange, seeded
// from the profile's seed, the fault's index and the traffic's identity: a
// PCG held by value, so seeding one costs no allocation. It is not safe for
// concurrent use; each decision has its own.
type Rand struct {
	pcg rand.PCG
}

// Salts keep the draws for an exchange apart from those for its stream.
const (
	saltExchange uint64 = 0x65786368616e6765 // "exchange"
	saltStream   uint64 = 0x73747265616d0000 // "stream"
)

// seed derives the source of fault index for the traffic identified by id.
func (r *Rand) seed(planSeed uint64, index int, salt, id uint64) {
	r.pcg.Seed(mix(planSeed^salt)+uint64(index), mix(id^uint64(index)))
}

// Chance draws whether an event of probability p happens. p >= 1 and
// p <= 0 draw nothing, so certain faults leave the sequence untouched.
func (r *Rand) Chance(p float64) bool {
	if p >= 1 {
		return true
	}
	if p <= 0 {
		return false
	}
	return float64(r.pcg.Uint64()>>11)*0x1p-53 < p
}

// UpTo draws a duration in [0, d].
func (r *Rand) UpTo(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	hi, _ := bits.Mul64(r.pcg.Uint64(), uint64(d)+1)
	return time.Duration(hi)
}

// mix is SplitMix64's finaliser.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// identity hashes what names an exchange the same way in every run: the
// session's number, the stream type, the client's JSON-RPC method and id,
// and, for an exchange without an id, its number among the session's
// exchanges of that type. A request's id is unique in its session, while
// the number follows the order in which concurrent requests happen to
// arrive, so it is used only where nothing else tells exchanges apart.
// The session id string differs run to run and is left out.
func identity(ex *mcp.Exchange) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	word := func(v uint64) {
		for i := 0; i < 8; i++ {
			h = (h ^ (v & 0xff)) * prime
			v >>= 8
		}
	}
	word(uint64(ex.SessionSeq))
	word(uint64(ex.Stream))
	if ex.RPCID == "" {
		word(uint64(ex.StreamSeq))
	}
	for i := 0; i < len(ex.RPCMethod); i++ {
		h = (h ^ uint64(ex.RPCMethod[i])) * prime
	}
	word(0xff)
	for i := 0; i < len(ex.RPCID); i++ {
		h = (h ^ uint64(ex.RPCID[i])) * prime
	}
	return h
}
