package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hookd/hookd"
)

// classify marks the errors of a database that cannot be reached as hookd.ErrUnavailable, and no
// others.
func TestClassifyUnavailable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "57P01"}, true}, // admin_shutdown
		{&pgconn.PgError{Code: "57P03"}, true}, // cannot_connect_now
		{&pgconn.PgError{Code: "08006"}, true}, // connection_failure
		{&pgconn.PgError{Code: "53100"}, true}, // disk_full
		{&pgconn.PgError{Code: "53300"}, true}, // too_many_connections
		{&pgconn.PgError{Code: "58030"}, true}, // io_error
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{syscall.ECONNRESET, true},
		{errors.New("conn closed"), true},
		{&pgconn.PgError{Code: codeUniqueViolation}, false},
		{&pgconn.PgError{Code: "22P02"}, false}, // invalid_text_representation
		{context.Canceled, false},
		{errors.New("something else"), false},
	} {
		got := errors.Is(classify(tc.err), hookd.ErrUnavailable)
		if got != tc.want {
			t.Errorf("classify(%v) unavailable = %v, want %v", tc.err, got, tc.want)
		}
	}
}
