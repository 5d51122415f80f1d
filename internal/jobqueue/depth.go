package jobqueue

import "github.com/hookd/hookd"

// DepthRows are the rows of a store's queue-depth query, (lane, due, count) each: a *sql.Rows or
// a pgx.Rows.
type DepthRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// ReadDepths sums the rows of a queue-depth query by lane. The caller closes rows.
func ReadDepths(rows DepthRows) ([]hookd.LaneDepth, error) {
	var out []hookd.LaneDepth
	for rows.Next() {
		var (
			lane string
			due  bool
			n    int64
		)
		if err := rows.Scan(&lane, &due, &n); err != nil {
			return nil, err
		}
		out = addDepth(out, hookd.Lane(lane), due, n)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// addDepth adds n jobs of lane, due or scheduled, to ds.
func addDepth(ds []hookd.LaneDepth, lane hookd.Lane, due bool, n int64) []hookd.LaneDepth {
	i := 0
	for i < len(ds) && ds[i].Lane != lane {
		i++
	}
	if i == len(ds) {
		ds = append(ds, hookd.LaneDepth{Lane: lane})
	}
	if due {
		ds[i].Due += n
	} else {
		ds[i].Scheduled += n
	}
	return ds
}
