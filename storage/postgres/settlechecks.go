package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// A settlement writes a posting per paid holder: 750,000 of them for a
// void of a million positions. Each row of postings has two foreign keys
// on ledger_accounts (and one on trades, NULL here), which PostgreSQL
// checks row by row: for every posting, a query for the paying account
// and one for the holder's, each taking a KEY SHARE lock on the account's
// row, which writes the row and a WAL record for the holder's. That was
// about half of a settlement's time, to check what the settlement knows
// already:
//
//   - every paying account (escrow, fee account, treasury) is locked by
//     the settlement FOR NO KEY UPDATE, which a DELETE waits for, and
//     found by that lock: the escrow and the fee accounts before the
//     postings, the treasury in the same round trip as the credits (a
//     settlement that finds it gone fails);
//   - every holder's account was read from ledger_accounts when staged,
//     and the credits lock each of them FOR NO KEY UPDATE before the
//     transaction ends, and fail the settlement unless they update exactly
//     as many accounts as were staged (sqlCredited).
//
// So by COMMIT every account a settlement's posting names exists and is
// locked by it: one deleted before the lock fails the settlement, and one
// deleted after it waits for the COMMIT and then meets the posting in the
// foreign key's own check on delete, which stays. The settlement
// therefore turns the row-by-row checks off for its holders' postings
// only: session_replication_role = replica, local to the transaction, set
// just before those INSERTs and reset just after them, in the same round
// trip. Every other statement, the settlement's leftover posting
// included, and every other transaction, keeps the foreign keys; the
// table keeps its constraints. Postings have no other trigger that the
// setting would skip (TestPostingsHaveNoOtherTriggers keeps it so).
//
// Setting session_replication_role needs a superuser or, from PostgreSQL
// 15 on, GRANT SET ON PARAMETER session_replication_role to the store's
// role. Without it (or with WithRowByRowPostingChecks) settlements leave
// the checks to the foreign keys, as before.

const (
	postingChecksUnknown int32 = iota
	postingChecksSetBased
	postingChecksPerRow
)

const (
	sqlPostingChecksOff = `SELECT set_config('session_replication_role', 'replica', true)`
	sqlPostingChecksOn  = `SELECT set_config('session_replication_role', 'origin', true)`
)

// sqlMaySkipChecks says whether the store's role may set
// session_replication_role (has_parameter_privilege is PostgreSQL 15's;
// before it, only a superuser may).
const (
	sqlMaySkipChecks      = `SELECT has_parameter_privilege('session_replication_role', 'SET')`
	sqlMaySkipChecksOlder = `SELECT current_setting('is_superuser') = 'on'`
)

// settlementChecksPostings says whether a settlement checks the accounts
// of its holders' postings itself (see above) rather than leaving them to
// the foreign keys row by row. The server is asked once.
func (s *Store) settlementChecksPostings(ctx context.Context) bool {
	switch s.postingChecks.Load() {
	case postingChecksSetBased:
		return true
	case postingChecksPerRow:
		return false
	}
	may, err := s.maySkipChecks(ctx)
	if err != nil {
		// Asked again by the next settlement; this one goes the safe way.
		return false
	}
	next := postingChecksPerRow
	if may {
		next = postingChecksSetBased
	}
	s.postingChecks.CompareAndSwap(postingChecksUnknown, next)
	return s.postingChecks.Load() == postingChecksSetBased
}

func (s *Store) maySkipChecks(ctx context.Context) (bool, error) {
	var may bool
	err := s.pool.QueryRow(ctx, sqlMaySkipChecks).Scan(&may)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42883" { // undefined_function: before 15
		err = s.pool.QueryRow(ctx, sqlMaySkipChecksOlder).Scan(&may)
	}
	return may, err
}

// checksRefused says err is the server refusing the settlement
// session_replication_role (the role lost the right since it was asked):
// the settlement runs again with the foreign keys, and so do the next.
func (s *Store) checksRefused(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" { // insufficient_privilege
		s.postingChecks.Store(postingChecksPerRow)
		return true
	}
	return false
}
