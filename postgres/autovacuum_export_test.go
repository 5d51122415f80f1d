package postgres

import "context"

// AutovacuumWarning is the warning Open logs about s's autovacuum, read now; empty when none.
func AutovacuumWarning(ctx context.Context, s *Store) (string, error) {
	st, err := readAutovacuum(ctx, s.queries.c)
	return st.warning(), err
}
