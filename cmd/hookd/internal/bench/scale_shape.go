package bench

// This file and the other scale_*.go make a big database of a realistic shape through hookd's
// real send path ("hookd bench fill") and time every list, filter, stats call and page of a
// hookd serve on it against one on a small database of the same shape ("hookd bench scale").

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// The shape of a fill: 100 applications whose sizes follow Zipf's law (the largest gets about
// 15.6 % of the messages), 345 endpoints (3 per application, 6 for the 15 largest), some with
// event-type filters or channels; 20 event types, also Zipf-distributed; 30 % of the messages on
// one of three channels, 25 % tagged; about 3 deliveries per message.
const (
	shapeApps        = 100
	shapeZipfApps    = 0.9 // exponent of the applications' sizes: the largest gets 15.6 %
	shapeZipfTypes   = 1.0 // exponent of the event types' frequencies
	shapeBigApps     = 15  // the largest applications, which have 6 endpoints instead of 3
	shapeChannelRate = 0.30
	shapeTagRate     = 0.25
	// transientRate is the share of attempts a receiver fails at random (HTTP 500) and
	// permanentRate the share of deliveries whose every attempt it fails.
	transientRate = 0.03
	permanentRate = 0.005
)

// eventTypes are the 20 event types, most frequent first.
var eventTypes = []string{
	"invoice.paid", "invoice.created", "payment.succeeded", "customer.updated", "order.created",
	"subscription.renewed", "payment.failed", "order.shipped", "invoice.voided", "customer.created",
	"subscription.created", "order.cancelled", "payment.refunded", "subscription.cancelled",
	"customer.deleted", "order.returned", "invoice.overdue", "payment.disputed", "subscription.paused",
	"customer.merged",
}

// channels are the channels a message may be on.
var channels = []string{"eu", "us", "apac"}

// tagNames are the tags a tagged message gets one or two of.
var tagNames = []string{"priority", "backfill", "partner", "test-mode", "migration", "vip"}

// appUID is the uid of application k (0: the largest).
func appUID(k int) string { return fmt.Sprintf("scale-%03d", k) }

// endpointCount is the number of endpoints of application k.
func endpointCount(k int) int {
	if k < shapeBigApps {
		return 6
	}
	return 3
}

// endpointShape is the filter of endpoint j of an application: event types and channels it
// subscribes to (none: every message).
func endpointShape(j int) (types, chans []string) {
	switch j {
	case 2:
		return []string{"invoice.paid", "invoice.created", "invoice.voided", "invoice.overdue"}, nil
	case 3:
		return nil, []string{"eu"}
	case 4:
		return []string{"payment.succeeded", "payment.failed", "payment.refunded", "payment.disputed",
			"order.created", "order.shipped", "order.cancelled", "order.returned"}, nil
	case 5:
		return []string{"invoice.paid", "payment.succeeded", "order.created", "payment.failed", "invoice.voided",
			"subscription.created", "payment.refunded", "customer.deleted", "invoice.overdue", "subscription.paused"}, nil
	}
	return nil, nil // 0 and 1: every message
}

// zipf is a cumulative Zipf distribution over n items.
type zipfDist []float64

func newZipf(n int, s float64) zipfDist {
	z := make(zipfDist, n)
	sum := 0.0
	for k := range n {
		sum += math.Pow(float64(k+1), -s)
		z[k] = sum
	}
	for k := range z {
		z[k] /= sum
	}
	return z
}

// pick returns the item u (in [0, 1)) falls on.
func (z zipfDist) pick(u float64) int {
	return min(sort.SearchFloat64s(z, u), len(z)-1)
}

// share returns item k's share.
func (z zipfDist) share(k int) float64 {
	if k == 0 {
		return z[0]
	}
	return z[k] - z[k-1]
}

var (
	appDist  = newZipf(shapeApps, shapeZipfApps)
	typeDist = newZipf(len(eventTypes), shapeZipfTypes)
)

// planned is message seq of a fill with seed: what Send gets.
type plannedMessage struct {
	app       int
	eventType string
	channel   string   // "" for none
	tags      []string // nil for none
	payload   []byte
}

// planMessage returns message seq of the fill with seed: the same for the same seed and seq, whatever
// the order messages are made in.
func planMessage(seed uint64, seq int) plannedMessage {
	r := rand.New(rand.NewPCG(seed, uint64(seq)))
	p := plannedMessage{app: appDist.pick(r.Float64()), eventType: eventTypes[typeDist.pick(r.Float64())]}
	if r.Float64() < shapeChannelRate {
		p.channel = channels[r.IntN(len(channels))]
	}
	if r.Float64() < shapeTagRate {
		p.tags = []string{tagNames[r.IntN(len(tagNames))]}
		if r.IntN(3) == 0 {
			if t := tagNames[r.IntN(len(tagNames))]; t != p.tags[0] {
				p.tags = append(p.tags, t)
			}
		}
	}
	// "seq" comes first: the receiver reads it to decide which deliveries fail for good.
	p.payload = fmt.Appendf(nil, `{"seq":%d,"type":%q,"data":{"id":"obj_%012d","customer":"cus_%06d","amount":%d,"currency":%q,"description":"scale fill message %d","lines":%d}}`,
		seq, p.eventType, r.Uint64()%1e12, r.IntN(50000), 100+r.IntN(99900), []string{"eur", "usd", "gbp"}[r.IntN(3)], seq, 1+r.IntN(9))
	return p
}

// matches says whether endpoint j of an application gets p.
func (p plannedMessage) matches(j int) bool {
	types, chans := endpointShape(j)
	if len(types) > 0 && !hasString(types, p.eventType) {
		return false
	}
	if len(chans) > 0 && !hasString(chans, p.channel) {
		return false
	}
	return true
}

func hasString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// failsForGood says whether the receiver fails every attempt of message seq to the endpoint at
// path: a hash of the seed, seq and path, so the same deliveries fail in every fill of a seed.
func failsForGood(seed uint64, seq int, path string) bool {
	h := seed ^ uint64(seq)*0x9E3779B97F4A7C15
	for i := 0; i < len(path); i++ {
		h ^= uint64(path[i])
		h *= 0x100000001B3
	}
	h ^= h >> 29
	h *= 0xBF58476D1CE4E5B9
	h ^= h >> 32
	return float64(h%1_000_000)/1e6 < permanentRate
}
