package listshape

import (
	"context"
	"slices"
	"testing"
)

// CheckPage lists c through r and fails t unless the page is c.Want, which must not be empty (a
// case that lists nothing tests no page). The stores' plan tests call it before they check the
// plans the list made.
func (c Case) CheckPage(ctx context.Context, t *testing.T, r Lister) {
	t.Helper()
	got, err := c.List(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, c.Want) {
		t.Errorf("listed %d: %v\nwant %d: %v", len(got), got, len(c.Want), c.Want)
	}
	if len(c.Want) == 0 {
		t.Errorf("the case lists nothing: it tests no page")
	}
}
