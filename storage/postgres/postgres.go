// Package postgres stores predictkit's domains in PostgreSQL through
// pgx/v5. A *Store implements account.Store, market.Store and
// partner.Store; its schema is a series of SQL migrations embedded in the
// binary and applied with goose (Migrate). Tests get a store of their own
// from package pgtest.
//
// Every operation that moves money runs in one transaction that locks what
// it touches in a fixed order — the market row first, then ledger accounts
// by ascending id — so that concurrent operations queue instead of
// deadlocking, and is retried from the start (decision included) when
// PostgreSQL reports a serialization failure or a deadlock anyway.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/market"
)

var (
	_ account.Store = (*Store)(nil)
	_ market.Store  = (*Store)(nil)
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the schema's SQL migrations, in goose's format.
func Migrations() fs.FS {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return sub
}

// Store is the PostgreSQL implementation of account.Store and
// market.Store. It is safe for concurrent use.
type Store struct {
	pool    *pgxpool.Pool
	schema  string
	retries int
	// accountIDs lets the money path lock known accounts by id.
	accountIDs accountIDs
	// changeChannel is where the store announces new change-log entries;
	// changed wakes the pollers of ChangeFeed (changes.go).
	changeChannel string
	changed       changelog.Signal
	// unloggedTrades leaves the change log out of trades: only benchmarks
	// set it (export_test.go), to measure what the log costs a trade.
	unloggedTrades bool
	// postingChecks is how a settlement checks the accounts of its
	// holders' postings (settlechecks.go): postingChecksUnknown until the
	// first settlement asks the server.
	postingChecks atomic.Int32
	// chunk and share pace a large settlement (settle_chunks.go);
	// interrupt, set by tests only, fails a settlement after a chunk.
	chunk     int
	share     float64
	interrupt func(chunk int) error
	// replicas serve the reads that may lag (replicas.go); nil without.
	replicas *replicaSet
}

// Option configures a Store.
type Option func(*config) error

type config struct {
	schema   string
	retries  int
	maxConns int32
	// rowChecks makes settlements leave every posting to the foreign keys.
	rowChecks bool
	// chunk and share are WithSettlementChunks'.
	chunk int
	share float64
	// replicaURLs are the read replicas (WithReplicas).
	replicaURLs []string
	replicas    ReplicaConfig
}

// DefaultRetries is how many times a money operation runs before a
// serialization failure or deadlock is returned to the caller.
const DefaultRetries = 5

var schemaName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// WithSchema runs every connection with search_path set to schema, so that
// the tables (and goose's version table) live there. Migrate creates the
// schema if it does not exist. The name must be a plain identifier.
func WithSchema(schema string) Option {
	return func(c *config) error {
		if !schemaName.MatchString(schema) {
			return fmt.Errorf("postgres: invalid schema name %q", schema)
		}
		c.schema = schema
		return nil
	}
}

// WithRetries sets how many times a transaction that hits a serialization
// failure or deadlock runs in all before the error is returned (at least 1).
func WithRetries(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return errors.New("postgres: retries must be at least 1")
		}
		c.retries = n
		return nil
	}
}

// WithMaxConns bounds the connection pool.
func WithMaxConns(n int32) Option {
	return func(c *config) error {
		if n < 1 {
			return errors.New("postgres: max conns must be at least 1")
		}
		c.maxConns = n
		return nil
	}
}

// WithRowByRowPostingChecks makes settlements leave the accounts of every
// posting they write to the postings table's foreign keys, row by row, as
// any other statement does, even when the database role may switch them
// off for the settlement's postings (see Store.Settle): the slower way,
// for comparison and for servers that would rather not.
func WithRowByRowPostingChecks() Option {
	return func(c *config) error {
		c.rowChecks = true
		return nil
	}
}

// The pace of a settlement when WithSettlementChunks does not set it.
const (
	// DefaultSettleChunk is how many open positions a settlement's
	// transaction reads at most.
	DefaultSettleChunk = 5000
	// DefaultSettleShare is the part of its time a chunked settlement
	// spends in its transactions; it sleeps the rest.
	DefaultSettleShare = 0.3
)

// WithSettlementChunks sets the pace of a settlement (see Store.Settle):
// a market with more than size open positions is settled in
// transactions that read size open positions at most (the last holder's
// whole), and between two of them the settlement sleeps so that it runs
// share of its time: after a chunk that took d, d·(1−share)/share. A
// size of 0 settles every market in one transaction; a share of 1 does
// not sleep.
func WithSettlementChunks(size int, share float64) Option {
	return func(c *config) error {
		if size < 0 {
			return errors.New("postgres: settlement chunk must not be negative")
		}
		if !(share > 0 && share <= 1) {
			return errors.New("postgres: settlement share must be in (0, 1]")
		}
		c.chunk, c.share = size, share
		return nil
	}
}

func poolConfig(databaseURL string, opts []Option) (*pgxpool.Config, *config, error) {
	c := &config{retries: DefaultRetries, chunk: DefaultSettleChunk, share: DefaultSettleShare}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, nil, err
		}
	}
	pc, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		// pgx's message may quote the URL, password included.
		return nil, nil, errors.New("postgres: cannot parse the database URL")
	}
	if c.schema != "" {
		pc.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{c.schema}.Sanitize()
	}
	if c.maxConns > 0 {
		pc.MaxConns = c.maxConns
	}
	// Times come back in UTC, as the domain keeps them, not in the
	// process's local zone.
	pc.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		conn.TypeMap().RegisterType(&pgtype.Type{Name: "timestamptz", OID: pgtype.TimestamptzOID, Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC}})
		return nil
	}
	return pc, c, nil
}

// New connects to the database at databaseURL (a postgres:// URL or a
// key=value string, as pgx reads them) and pings it. It does not migrate.
func New(ctx context.Context, databaseURL string, opts ...Option) (*Store, error) {
	pc, c, err := poolConfig(databaseURL, opts)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: ping: %w", err)
	}
	s := &Store{pool: pool, schema: c.schema, retries: c.retries, changeChannel: changeChannel(c.schema),
		chunk: c.chunk, share: c.share}
	if c.rowChecks {
		s.postingChecks.Store(postingChecksPerRow)
	}
	if len(c.replicaURLs) > 0 {
		if s.replicas, err = newReplicaSet(ctx, pool, c.replicaURLs, opts, c.replicas); err != nil {
			pool.Close()
			return nil, err
		}
	}
	return s, nil
}

// Close closes every connection of the pool and of the replicas'.
func (s *Store) Close() {
	if s.replicas != nil {
		s.replicas.close()
	}
	s.pool.Close()
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	return nil
}

// DB is the connection pool, for packages that keep their own tables in
// the same database.
func (s *Store) DB() *pgxpool.Pool { return s.pool }

// now is the store's clock: UTC, truncated to what timestamptz keeps, so
// that a value written and read back is equal to the one in memory.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// dbTime brings a time the caller gave to what the database will keep.
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// timePtr is dbTime for a time that may be absent.
func timePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := dbTime(*t)
	return &u
}
