package redisqueue

import (
	"context"
	"fmt"
	"time"

	"github.com/hookd/hookd"
	"github.com/redis/go-redis/v9"
)

var _ hookd.SlotLeaser = (*Queue)(nil)

// The slot leases (hookd.SlotLeaser) of an endpoint live in two keys of the namespace, both
// tagged {<Namespace>} so that a namespace's slot keys share one cluster slot and a renewal of
// many endpoints is one script: a sorted set of the holders scored by the end of their lease in
// milliseconds on Redis's clock (TIME), and a hash of each holder's count. A script serialises
// with every other, so an acquisition counts and grants in one step. Each key expires with the
// last lease it holds.

// slotKeys returns the sorted set and the hash of the endpoint's leases.
func (q *Queue) slotKeys(endpointID string) (leases, counts string) {
	base := "hookd:{" + q.cfg.Namespace + "}:slots:" + endpointID
	return base, base + ":n"
}

// slotClock is the Lua that reads Redis's clock in milliseconds into now, and expireKeys the
// function that makes a pair of keys expire with the last lease of the first.
const slotClock = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function expireKeys(leases, counts)
	local last = redis.call('ZRANGE', leases, -1, -1, 'WITHSCORES')
	if #last == 0 then
		redis.call('DEL', leases, counts)
		return
	end
	redis.call('PEXPIREAT', leases, last[2])
	redis.call('PEXPIREAT', counts, last[2])
end
`

// acquireSlotsScript: KEYS leases, counts; ARGV holder, held, want, capacity, lease, want lease
// (ms). It drops the ended leases, grants up to want within capacity for the live holders, sets
// the holder's count to held plus those granted (with the want lease when that is none: it
// wants), and returns how many it granted and how many live holders contend, itself among them.
var acquireSlotsScript = redis.NewScript(slotClock + `
local ended = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
for _, h in ipairs(ended) do
	redis.call('HDEL', KEYS[2], h)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local holder = ARGV[1]
local held, want, capacity, lease, wantLease = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local others = 0
local counts = redis.call('HGETALL', KEYS[2])
for i = 1, #counts, 2 do
	if counts[i] ~= holder then
		others = others + tonumber(counts[i + 1])
	end
end
local granted = math.max(math.min(want, capacity - others - held), 0)
local n = math.max(held + granted, 0)
if n <= 0 then
	lease = math.min(lease, wantLease)
end
redis.call('HSET', KEYS[2], holder, n)
redis.call('ZADD', KEYS[1], now + lease, holder)
expireKeys(KEYS[1], KEYS[2])
return {granted, redis.call('ZCARD', KEYS[1])}
`)

// renewSlotsScript: KEYS leases and counts of each endpoint in turn; ARGV holder, lease (ms).
// It extends the holder's live leases of some slots and returns, for each endpoint renewed, its
// (1-based) number and its live holders.
var renewSlotsScript = redis.NewScript(slotClock + `
local holder, lease = ARGV[1], tonumber(ARGV[2])
local renewed = {}
for i = 1, #KEYS, 2 do
	local ends = redis.call('ZSCORE', KEYS[i], holder)
	local n = tonumber(redis.call('HGET', KEYS[i + 1], holder) or '0')
	if ends and tonumber(ends) > now and n > 0 then
		redis.call('ZADD', KEYS[i], 'XX', now + lease, holder)
		expireKeys(KEYS[i], KEYS[i + 1])
		renewed[#renewed + 1] = (i + 1) / 2
		renewed[#renewed + 1] = redis.call('ZCOUNT', KEYS[i], '(' .. now, '+inf')
	end
end
return renewed
`)

// releaseSlotsScript: KEYS leases, counts; ARGV holder, keep. It lowers the holder's count to
// keep, dropping its lease at zero.
var releaseSlotsScript = redis.NewScript(slotClock + `
local holder, keep = ARGV[1], tonumber(ARGV[2])
if keep <= 0 then
	redis.call('ZREM', KEYS[1], holder)
	redis.call('HDEL', KEYS[2], holder)
	expireKeys(KEYS[1], KEYS[2])
	return 0
end
local n = redis.call('HGET', KEYS[2], holder)
if n and tonumber(n) > keep then
	redis.call('HSET', KEYS[2], holder, keep)
end
return 0
`)

// AcquireSlots grants holder up to want slots of the endpoint beyond held, within capacity for
// every live holder of the namespace, and counts the contenders (hookd.SlotLeaser), in one script.
func (q *Queue) AcquireSlots(ctx context.Context, holder, endpointID string, held, want, capacity int, lease time.Duration) (int, int, error) {
	leases, counts := q.slotKeys(endpointID)
	r, err := acquireSlotsScript.Run(ctx, q.rdb, []string{leases, counts}, holder, held, want, capacity,
		lease.Milliseconds(), hookd.SlotWantLease.Milliseconds()).Int64Slice()
	if err != nil {
		return 0, 0, fmt.Errorf("redisqueue: acquire slots of endpoint %s: %w", endpointID, err)
	}
	if len(r) != 2 {
		return 0, 0, fmt.Errorf("redisqueue: acquire slots of endpoint %s: the script returned %d values, want 2", endpointID, len(r))
	}
	return int(r[0]), int(r[1]), nil
}

// RenewSlots extends the leases of holder's slots of the endpoints given, in one script, and
// returns those it renewed with their contenders.
func (q *Queue) RenewSlots(ctx context.Context, holder string, endpointIDs []string, lease time.Duration) (map[string]int, error) {
	if len(endpointIDs) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, 2*len(endpointIDs))
	for _, id := range endpointIDs {
		leases, counts := q.slotKeys(id)
		keys = append(keys, leases, counts)
	}
	nums, err := renewSlotsScript.Run(ctx, q.rdb, keys, holder, lease.Milliseconds()).Int64Slice()
	if err != nil {
		return nil, fmt.Errorf("redisqueue: renew slots: %w", err)
	}
	renewed := make(map[string]int, len(nums)/2)
	for i := 0; i+1 < len(nums); i += 2 {
		renewed[endpointIDs[nums[i]-1]] = int(nums[i+1])
	}
	return renewed, nil
}

// ReleaseSlots gives back all but keep of holder's slots of the endpoint.
func (q *Queue) ReleaseSlots(ctx context.Context, holder, endpointID string, keep int) error {
	leases, counts := q.slotKeys(endpointID)
	if err := releaseSlotsScript.Run(ctx, q.rdb, []string{leases, counts}, holder, keep).Err(); err != nil {
		return fmt.Errorf("redisqueue: release slots of endpoint %s: %w", endpointID, err)
	}
	return nil
}
