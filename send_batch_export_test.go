package hookd

import "context"

// SendBatchForTest writes msgs[i] to apps[i] as one batch of the send batcher, as that many
// concurrent Sends that met in it would be written, and returns what each Send would return.
func (c *Client) SendBatchForTest(ctx context.Context, apps []string, msgs []*MessageIn) ([]*SendResult, []error) {
	res, errs := make([]*SendResult, len(msgs)), make([]error, len(msgs))
	var batch []*pendingSend
	var at []int
	for i, in := range msgs {
		m, err := c.prepare(in)
		if err != nil {
			errs[i] = err
			continue
		}
		batch = append(batch, &pendingSend{ctx: ctx, app: apps[i], msg: m, done: make(chan struct{}), lead: make(chan struct{})})
		at = append(at, i)
	}
	if len(batch) > 0 {
		c.commitSendBatch(batch[0], func() []*pendingSend { return batch })
	}
	for j, it := range batch {
		res[at[j]], errs[at[j]] = it.res, it.err
	}
	return res, errs
}
