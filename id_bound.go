package hookd

import "time"

// idClockSlack is how far a row's id may be from its creation time and the id still bound a list
// by that time: ids and creation times come from one process's clocks, a moment apart, and a
// clock stepped back keeps its ids counting up from the last (idSource.next) until it catches up.
// A list bounded by id walks at most this much more of its index than the times alone would read.
const idClockSlack = time.Minute

// MessageIDFloor is the least message id that can be made at or after t, as AttemptIDFloor is
// for attempts.
func MessageIDFloor(t time.Time) string { return idFloor(prefixMessage, t) }

// DeliveryIDFloor is the least delivery id that can be made at or after t.
func DeliveryIDFloor(t time.Time) string { return idFloor(prefixDelivery, t) }

// idBounds returns the ids that bound a list of rows with prefix created in [after, before) (nil
// for no bound): from, the least id such a row can have, and to, an id every such row sorts
// before, each idClockSlack wider than the times; "" where there is no bound. It returns no
// bounds while this client's ids and creation times disagree (a clock stepped back): a row's id
// then says nothing of its creation time.
func (c *Client) idBounds(prefix string, after, before *time.Time) (from, to string) {
	if after == nil && before == nil || !c.idsFollowClock() {
		return "", ""
	}
	if after != nil {
		from = idFloor(prefix, after.Add(-idClockSlack))
	}
	if before != nil {
		to = idFloor(prefix, before.Add(idClockSlack))
	}
	return from, to
}

// idsFollowClock reports whether an id made now sorts among the ids of c's present time: whether
// rows this client makes have ids that sort by their creation times. Ids come from Config.Now,
// but a clock stepped back keeps its ids counting up from the last until it catches up.
func (c *Client) idsFollowClock() bool {
	now := c.now()
	probe := c.newID(prefixEvent)
	return probe >= idFloor(prefixEvent, now.Add(-idClockSlack)) && probe < idFloor(prefixEvent, now.Add(idClockSlack))
}
