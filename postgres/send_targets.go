package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hookd/hookd"
)

// The reads of a batch of sends (hookd.MessageBatchWriter's SendTargets), sent together: the
// applications named, by id or uid, and the enabled endpoints of those applications. Each name
// is looked up on its own (LATERAL), so that every plan walks the indexes of ids and uids, nested
// loops, whatever the tables' statistics; an application found twice (by one name's id and
// another's uid) and the endpoints it then repeats are dropped here, and the endpoints sorted
// here, so that no plan sorts.
const (
	sendAppIDs = `unnest($1::text[]) AS n (name)
		CROSS JOIN LATERAL (SELECT * FROM hookd_applications a WHERE a.id = n.name
			UNION ALL SELECT * FROM hookd_applications a WHERE a.uid = n.name) AS a`
	sendAppsSQL      = `SELECT ` + applicationCols + ` FROM ` + sendAppIDs
	sendEndpointsSQL = `SELECT ` + endpointCols + ` FROM ` + sendAppIDs + `
		CROSS JOIN LATERAL (SELECT * FROM hookd_endpoints e WHERE e.app_id = a.id AND NOT e.disabled OFFSET 0) AS e`
)

// SendTargets finds the applications named (by id or, failing that, by uid) and their enabled
// endpoints, in one round trip (with BEGIN when it is the transaction's first).
func (t *txn) SendTargets(ctx context.Context, names []string) (map[string]*hookd.Application, map[string][]hookd.Endpoint, error) {
	var found []hookd.Application
	endpoints := map[string][]hookd.Endpoint{}
	seen := map[string]bool{}
	err := queryAll(ctx, t.c, []batchQuery{
		{sql: sendAppsSQL, args: []any{names}, each: func(r row) error {
			a, err := dialect.ScanApplication(r)
			if err != nil {
				return err
			}
			found = append(found, a)
			return nil
		}},
		{sql: sendEndpointsSQL, args: []any{names}, each: func(r row) error {
			e, err := dialect.ScanEndpoint(r)
			if err != nil {
				return err
			}
			if !seen[e.ID] {
				seen[e.ID] = true
				endpoints[e.AppID] = append(endpoints[e.AppID], e)
			}
			return nil
		}},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read applications %s and their endpoints: %w", strings.Join(names, ", "), classify(err))
	}
	apps := make(map[string]*hookd.Application, len(names))
	for i := range found { // a name that is an application's id names it, whatever uids say
		if a := &found[i]; slices.Contains(names, a.ID) {
			apps[a.ID] = a
		}
	}
	for i := range found {
		if a := &found[i]; a.UID != "" && apps[a.UID] == nil && slices.Contains(names, a.UID) {
			apps[a.UID] = a
		}
	}
	for id, eps := range endpoints {
		slices.SortFunc(eps, func(a, b hookd.Endpoint) int { return strings.Compare(a.ID, b.ID) })
		endpoints[id] = eps
	}
	for _, a := range found {
		if _, ok := endpoints[a.ID]; !ok {
			endpoints[a.ID] = nil
		}
	}
	return apps, endpoints, nil
}
