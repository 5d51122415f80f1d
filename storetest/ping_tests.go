package storetest

import (
	"context"
	"testing"
)

// pingTests check Ping, the health check of a store that has one (both SQL stores do).
var pingTests = []test{
	{"OpenStoreAnswers", func(t *testing.T, f *fixture) {
		p, ok := f.store.(interface {
			Ping(ctx context.Context) error
		})
		if !ok {
			t.Skip("the store has no Ping")
		}
		f.noErr(p.Ping(f.ctx))
	}},
}
