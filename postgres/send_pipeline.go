package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pipeConn is the connection of one InTx transaction, which sends the server what it can in one
// round trip: BEGIN goes with the transaction's first statement (and a transaction that runs
// none sends nothing), and writes held (hold, or every exec once holding is on) go with the next
// statement whose result is read, or with COMMIT. A held write's error comes back from that
// statement, or from commit.
type pipeConn struct {
	c       *pgxpool.Conn
	ctx     context.Context // InTx's, for Raw's statements
	begun   bool            // BEGIN has gone to the server
	holding bool            // every exec is held (HoldWrites)
	held    []heldWrite
	raw     pgx.Tx // what Raw returned, once it was asked for
	rawErr  error  // why Raw could not give one
}

type heldWrite struct {
	sql  string
	args []any
}

// hold keeps a write for the next round trip.
func (p *pipeConn) hold(query string, args ...any) {
	p.held = append(p.held, heldWrite{query, args})
}

// pending reports whether BEGIN or a held write is still to go to the server.
func (p *pipeConn) pending() bool { return !p.begun || len(p.held) > 0 }

// send sends BEGIN when it is still to go, the held writes, then queue's statements, in one
// batch; it reads the results of what it sent first and returns the batch positioned at queue's.
// On an error there it closes the batch.
func (p *pipeConn) send(ctx context.Context, queue func(b *pgx.Batch)) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	first, sentBegin := 0, !p.begun
	if sentBegin {
		b.Queue("BEGIN")
		first++
	}
	for _, w := range p.held {
		b.Queue(w.sql, w.args...)
	}
	first += len(p.held)
	p.begun, p.held = true, nil
	if queue != nil {
		queue(b)
	}
	br := p.c.SendBatch(ctx, b)
	for i := range first {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			if i == 0 && sentBegin {
				return nil, fmt.Errorf("begin transaction: %w", unavailable(err))
			}
			return nil, fmt.Errorf("held write: %w", unavailable(err))
		}
	}
	return br, nil
}

func (p *pipeConn) exec(ctx context.Context, query string, args ...any) (int64, error) {
	if p.holding {
		p.hold(query, args...)
		return 0, nil
	}
	if !p.pending() {
		return pgxConn{p.c}.exec(ctx, query, args...)
	}
	br, err := p.send(ctx, func(b *pgx.Batch) { b.Queue(query, args...) })
	if err != nil {
		return 0, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, unavailable(err)
	}
	return tag.RowsAffected(), nil
}

func (p *pipeConn) query(ctx context.Context, query string, args ...any) (rows, error) {
	if !p.pending() {
		return pgxConn{p.c}.query(ctx, query, args...)
	}
	br, err := p.send(ctx, func(b *pgx.Batch) { b.Queue(query, args...) })
	if err != nil {
		return nil, err
	}
	r, err := br.Query()
	if err != nil {
		r.Close()
		_ = br.Close()
		return nil, unavailable(err)
	}
	return markedRows{batchRows{r, br}}, nil
}

func (p *pipeConn) queryRow(ctx context.Context, query string, args ...any) row {
	if !p.pending() {
		return pgxConn{p.c}.queryRow(ctx, query, args...)
	}
	br, err := p.send(ctx, func(b *pgx.Batch) { b.Queue(query, args...) })
	if err != nil {
		return errRow{err}
	}
	return markedRow{batchRow{br}}
}

// queryAll runs queries in one round trip (with BEGIN and the held writes when they are still to
// go), giving each row of queries[i] to each[i].
func (p *pipeConn) queryAll(ctx context.Context, queries []batchQuery) error {
	br, err := p.send(ctx, func(b *pgx.Batch) {
		for _, q := range queries {
			b.Queue(q.sql, q.args...)
		}
	})
	if err != nil {
		return err
	}
	return readAll(br, queries)
}

// commit sends the held writes and COMMIT in one round trip; a transaction that sent nothing and
// holds nothing has nothing to commit.
func (p *pipeConn) commit(ctx context.Context) error {
	if !p.begun && len(p.held) == 0 {
		return nil
	}
	br, err := p.send(ctx, func(b *pgx.Batch) { b.Queue("COMMIT") })
	if err != nil {
		return err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return unavailable(err)
	}
	if tag.String() != "COMMIT" {
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// rollback ends the transaction if it began; held writes are dropped.
func (p *pipeConn) rollback(ctx context.Context) {
	p.held = nil
	if p.begun && p.c.Conn().PgConn().TxStatus() != 'I' {
		_, _ = p.c.Exec(ctx, "ROLLBACK")
	}
}

// rawTx returns a pgx.Tx on the transaction's connection, for a queue that inserts through the
// driver's transaction (River): the first call sends BEGIN and the held writes, so that what the
// caller then runs follows them. The pgx.Tx is never committed itself: InTx commits the
// connection's transaction.
func (p *pipeConn) rawTx() any {
	if p.raw != nil || p.rawErr != nil {
		return p.raw
	}
	var err error
	if !p.begun && len(p.held) == 0 {
		p.raw, err = p.c.Begin(p.ctx)
		p.begun = true
	} else {
		if err = p.flush(p.ctx); err == nil {
			// A pgx.Tx is only had from BeginTx, which runs its begin query: here one that
			// does nothing, in the transaction already begun.
			p.raw, err = p.c.BeginTx(p.ctx, pgx.TxOptions{BeginQuery: "SELECT"})
		}
	}
	if err != nil {
		p.rawErr = fmt.Errorf("driver's transaction: %w", unavailable(err))
		return nil
	}
	return p.raw
}

// flush sends BEGIN and the held writes, when there is any still to go.
func (p *pipeConn) flush(ctx context.Context) error {
	if !p.pending() {
		return nil
	}
	br, err := p.send(ctx, nil)
	if err != nil {
		return err
	}
	return unavailable(br.Close())
}

// batchQuery is one query of a round trip of several: each reads each of its rows.
type batchQuery struct {
	sql  string
	args []any
	each func(row) error
}

// queryAll runs queries on c: in one round trip on a pipeConn or any pgx connection, one after
// the other on a *sql.Tx.
func queryAll(ctx context.Context, c conn, queries []batchQuery) error {
	switch c := c.(type) {
	case *pipeConn:
		return c.queryAll(ctx, queries)
	case pgxConn:
		if s, ok := c.q.(interface {
			SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
		}); ok {
			b := &pgx.Batch{}
			for _, q := range queries {
				b.Queue(q.sql, q.args...)
			}
			return readAll(s.SendBatch(ctx, b), queries)
		}
	}
	for _, q := range queries {
		if err := eachRow(ctx, c, q); err != nil {
			return err
		}
	}
	return nil
}

// eachRow runs q on c and gives it each row.
func eachRow(ctx context.Context, c conn, q batchQuery) error {
	rs, err := c.query(ctx, q.sql, q.args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		if err := q.each(rs); err != nil {
			return err
		}
	}
	return rs.Err()
}

// readAll reads the results of queries from br and closes it.
func readAll(br pgx.BatchResults, queries []batchQuery) error {
	for _, q := range queries {
		r, err := br.Query()
		if err == nil {
			for r.Next() {
				if err = q.each(markedRows{r}); err != nil {
					break
				}
			}
			r.Close()
			if err == nil {
				err = r.Err()
			}
		}
		if err != nil {
			_ = br.Close()
			return unavailable(err)
		}
	}
	return unavailable(br.Close())
}

// batchRows are the rows of a batch's last query: closing them closes the batch.
type batchRows struct {
	pgx.Rows
	br pgx.BatchResults
}

func (r batchRows) Close() {
	r.Rows.Close()
	_ = r.br.Close()
}

// batchRow is the row of a batch's last query: scanning it closes the batch.
type batchRow struct{ br pgx.BatchResults }

func (r batchRow) Scan(dest ...any) error {
	err := r.br.QueryRow().Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

// errRow is a row that could not be read.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
