package hookd

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"
)

// ID prefixes, as Svix uses them.
const (
	prefixApp      = "app_"
	prefixEndpoint = "ep_"
	prefixMessage  = "msg_"
	prefixAttempt  = "atmpt_"
	prefixDelivery = "dlv_"
	prefixEvent    = "evt_"
)

// base62 digits in ASCII order, so that the encoding sorts like the number.
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// idLen is the width of the encoded part: 62^22 > 2^128.
const idLen = 22

// idSource makes 128-bit ids: 48 bits of Unix milliseconds, then 80 bits that are random for a new
// millisecond and incremented within one, so ids made from one source sort in the order made, even
// when the clock steps back.
type idSource struct {
	mu     sync.Mutex
	lastMS uint64
	hi, lo uint64 // the current 128-bit value
}

// ids is the source of every Client on the real clock (Config.Now unset), so that the ids of one
// process sort in the order made across its clients.
var ids idSource

// newID returns prefix + a fixed-width base62 id whose time part is the client's clock
// (Config.Now), so that ids sort by the creation times the client gives its rows: a client on a
// clock of its own (a fill spreading 30 days of data, a test) gets ids that idFloor bounds by
// those times. Such a client has a source of its own, whose ids sort in the order it makes them.
func (c *Client) newID(prefix string) string {
	hi, lo := c.ids.next(uint64(max(c.cfg.Now().UnixMilli(), 0)))
	return encodeID(prefix, hi, lo)
}

// encodeID returns prefix + the 128-bit value hi:lo in fixed-width base62.
func encodeID(prefix string, hi, lo uint64) string {
	var buf [idLen]byte
	for i := idLen - 1; i >= 0; i-- {
		var r uint64
		hi, lo, r = divmod62(hi, lo)
		buf[i] = base62[r]
	}
	return prefix + string(buf[:])
}

// newIDAt returns an id as newID does and the time of the client's clock it was made at, read
// while the source is held: rows made by concurrent goroutines then get ids in the order of their
// times, and a row's id encodes its creation time to the millisecond unless the clock stepped back.
func (c *Client) newIDAt(prefix string) (string, time.Time) {
	c.ids.mu.Lock()
	now := c.now()
	hi, lo := c.ids.nextLocked(uint64(max(now.UnixMilli(), 0)))
	c.ids.mu.Unlock()
	return encodeID(prefix, hi, lo), now
}

func (s *idSource) next(ms uint64) (hi, lo uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextLocked(ms)
}

// nextLocked is next with s.mu held.
func (s *idSource) nextLocked(ms uint64) (hi, lo uint64) {
	if ms > s.lastMS {
		var r [10]byte
		_, _ = rand.Read(r[:]) // crypto/rand.Read never fails on supported platforms
		s.lastMS = ms
		s.hi = ms<<16 | uint64(binary.BigEndian.Uint16(r[:2]))
		s.lo = binary.BigEndian.Uint64(r[2:])
		return s.hi, s.lo
	}
	// Same (or earlier: the clock stepped back) millisecond: count up from the last id.
	s.lo++
	if s.lo == 0 {
		s.hi++
	}
	return s.hi, s.lo
}

// divmod62 divides the 128-bit number hi:lo by 62.
func divmod62(hi, lo uint64) (qhi, qlo, r uint64) {
	qhi = hi / 62
	rem := hi % 62
	// (rem<<64 | lo) / 62, with rem < 62, done in 32-bit halves to stay in 64 bits.
	mid := rem<<32 | lo>>32
	qmid := mid / 62
	rem = mid % 62
	low := rem<<32 | lo&0xffffffff
	qlow := low / 62
	r = low % 62
	qlo = qmid<<32 | qlow
	return qhi, qlo, r
}

// idFloor returns the least id with prefix that newID can make at or after t: every id made from
// t on sorts at or after it, so a range of ids stands for a range of creation times.
func idFloor(prefix string, t time.Time) string {
	return encodeID(prefix, uint64(max(t.UnixMilli(), 0))<<16, 0)
}

// AttemptIDFloor is the least attempt id that can be made at or after t: an attempt made at t
// is recorded, and gets its id, at t or later.
func AttemptIDFloor(t time.Time) string { return idFloor(prefixAttempt, t) }
