package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrExclusiveLost is returned by Exclusive when the connection that held
// the lock died while run was running: from that moment another instance
// may hold the lock, so run's context was cancelled.
var ErrExclusiveLost = errors.New("postgres: the connection holding the exclusive lock was lost")

// exclusiveCheck is how often Exclusive checks that the connection holding
// the lock is alive. A lost connection is noticed within about this time
// (or at once, when the server closes it cleanly).
var exclusiveCheck = time.Second

// Exclusive runs run while this process holds the lock called name, so
// that among the instances sharing the database only one runs it at a time
// (the change log's relay to NATS, a periodic job). The lock is a
// PostgreSQL session-level advisory lock, keyed by the store's schema and
// name, held on a connection of its own outside the pool.
//
// Exclusive waits while another session holds the lock, until ctx is done
// (it then returns ctx.Err()). Once it holds the lock it calls run and
// returns what run returns; the lock is released when run returns, and
// also when the connection dies — PostgreSQL releases a session's locks
// when the session ends — in which case run's context is cancelled, since
// another instance may now hold the lock, and Exclusive returns an error
// wrapping ErrExclusiveLost once run has returned. Callers that want to
// keep the job running call Exclusive again in a loop.
func (s *Store) Exclusive(ctx context.Context, name string, run func(context.Context) error) error {
	cc := s.pool.Config().ConnConfig // a copy
	if cc.RuntimeParams == nil {
		cc.RuntimeParams = map[string]string{}
	}
	// Named, so that an operator can tell who holds or awaits the lock in
	// pg_stat_activity; and without the timeouts a URL may set for
	// ordinary queries: waiting for the lock is this connection's job.
	cc.RuntimeParams["application_name"] = exclusiveApplicationName(name)
	cc.RuntimeParams["statement_timeout"] = "0"
	cc.RuntimeParams["lock_timeout"] = "0"
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return fmt.Errorf("postgres: exclusive %q: connect: %w", name, err)
	}
	defer func() {
		// Closing the session releases the lock, whatever state it is in.
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	// The key is taken from the connection's schema, not the Store's
	// option, so that stores whose schema comes from the URL's search_path
	// are told apart too.
	var schema string
	if err := conn.QueryRow(ctx, `SELECT COALESCE(current_schema(), '')`).Scan(&schema); err != nil {
		return fmt.Errorf("postgres: exclusive %q: %w", name, err)
	}
	key := exclusiveKey(schema, name)
	// pg_advisory_lock waits in the server: the lock is handed over the
	// moment its holder lets go or dies, with no polling.
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("postgres: exclusive %q: lock: %w", name, err)
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(runCtx) }()
	tick := time.NewTicker(exclusiveCheck)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			uctx, ucancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, _ = conn.Exec(uctx, `SELECT pg_advisory_unlock($1)`, key)
			ucancel()
			return err
		case <-tick.C:
			pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
			perr := conn.Ping(pctx)
			pcancel()
			if perr == nil || ctx.Err() != nil {
				continue // a ping cut short by ctx is not a lost connection
			}
			cancel()
			err := <-done
			lost := fmt.Errorf("postgres: exclusive %q: %w: %v", name, ErrExclusiveLost, perr)
			if err != nil && !errors.Is(err, context.Canceled) {
				return errors.Join(lost, err)
			}
			return lost
		}
	}
}

// exclusiveKey is the advisory lock key of name in schema. Advisory locks
// are database-wide, so the schema is part of the key: two deployments
// (or two tests) in one database do not exclude each other.
func exclusiveKey(schema, name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("predictkit exclusive\x00"))
	h.Write([]byte(schema))
	h.Write([]byte{0})
	h.Write([]byte(name))
	return int64(h.Sum64())
}

func exclusiveApplicationName(name string) string {
	// PostgreSQL keeps 63 bytes of it.
	n := "predictkit exclusive " + name
	if len(n) > 63 {
		n = n[:63]
	}
	return strings.ToValidUTF8(n, "")
}
