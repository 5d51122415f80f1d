package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// batchSizes are the row counts a multi-row statement is prepared for; a batch of n rows runs as
// the fewest statements of these sizes (100 rows: 64 + 16 + 16 + 4).
var batchSizes = [...]int{64, 16, 4, 1}

// batchStmt is one multi-row statement, prepared at Open for each of batchSizes.
type batchStmt [len(batchSizes)]*sql.Stmt

func prepareBatch(ctx context.Context, db *sql.DB, sqlFor func(rows int) string) (*batchStmt, error) {
	var b batchStmt
	for i, size := range batchSizes {
		st, err := db.PrepareContext(ctx, sqlFor(size))
		if err != nil {
			return nil, errors.Join(fmt.Errorf("prepare %d-row statement: %w", size, err), b.close())
		}
		b[i] = st
	}
	return &b, nil
}

func (b *batchStmt) close() error {
	var errs []error
	for _, st := range b {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// execBatch runs b over args, cols parameters a row, and returns the rows affected in all.
func (q *queries) execBatch(ctx context.Context, b *batchStmt, cols int, args []any) (int64, error) {
	rows := len(args) / cols
	var affected int64
	for done := 0; done < rows; {
		for i, size := range batchSizes {
			if rows-done < size {
				continue
			}
			res, err := q.stmt(ctx, b[i]).ExecContext(ctx, args[done*cols:(done+size)*cols]...)
			if err != nil {
				return affected, err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return affected, err
			}
			affected += n
			done += size
			break
		}
	}
	return affected, nil
}
