package postgres

// Reads that may lag go to streaming replicas (WithReplicas); everything
// else, and above all the money path, stays on the primary. The split is
// made in one place, Store.reader: the read methods that may lag ask it
// for what to query, the others use s.pool.
//
// A replica is used while it is up and its lag is within maxLag. Lag is
// measured in time, from WAL positions only: every check reads the
// primary's position P(t) at time t and keeps the samples; a replica that
// has replayed P(t) has everything committed before t, so its lag is at
// most now - t for the latest such t. (pg_last_xact_replay_timestamp
// would say the primary's idle hours are lag.)
//
// Read-your-writes: after a user's write (AfterWrite) the store remembers
// the primary's WAL position for that user for maxLag (a replica used at
// all has what is older); a read in that user's name (ForUser) goes to a
// replica that has replayed it, waiting up to maxWait for one, and to the
// primary otherwise.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/predictkit/predictkit/internal/coalesce"
)

// ReplicaConfig tunes the use of read replicas (WithReplicas).
type ReplicaConfig struct {
	// MaxWait is how long a read that must see its user's own write
	// waits for a replica to replay it before it asks the primary; 0
	// asks the primary at once.
	MaxWait time.Duration
	// MaxLag is the lag beyond which a replica is not used.
	MaxLag time.Duration
	// Check is how often each replica's position is measured.
	Check time.Duration
	// MaxUsers bounds how many users' last writes are remembered; past
	// it, one shared position stands for the rest (their reads wait for
	// the latest of their writes).
	MaxUsers int
}

// Defaults of ReplicaConfig's zero fields.
const (
	DefaultReplicaMaxWait  = 100 * time.Millisecond
	DefaultReplicaMaxLag   = 5 * time.Second
	DefaultReplicaCheck    = 250 * time.Millisecond
	DefaultReplicaMaxUsers = 100_000
)

// WithReplicas sends the reads that may lag to the streaming replicas at
// urls (PostgreSQL URLs, as New reads them). A replica that is down at
// start is not an error: it is skipped until a check finds it up.
func WithReplicas(urls []string, rc ReplicaConfig) Option {
	return func(c *config) error {
		c.replicaURLs = append([]string(nil), urls...)
		if rc.MaxWait < 0 || rc.MaxLag < 0 || rc.Check < 0 || rc.MaxUsers < 0 {
			return errors.New("postgres: replica settings must not be negative")
		}
		if rc.MaxLag == 0 {
			rc.MaxLag = DefaultReplicaMaxLag
		}
		if rc.Check == 0 {
			rc.Check = min(DefaultReplicaCheck, rc.MaxLag/4)
		}
		if rc.MaxUsers == 0 {
			rc.MaxUsers = DefaultReplicaMaxUsers
		}
		c.replicas = rc
		return nil
	}
}

// ForUser marks ctx as carrying a read in user userID's name: the store's
// reads that may lag then see that user's own writes (AfterWrite). The id
// is the caller's: any id space the caller keeps apart from the users'
// (the server uses partners' ids negated) works the same.
func ForUser(ctx context.Context, userID int64) context.Context {
	return context.WithValue(ctx, userKey{}, userID)
}

type userKey struct{}

func userOf(ctx context.Context) (int64, bool) {
	id, ok := ctx.Value(userKey{}).(int64)
	return id, ok
}

// ReplicaStatus is what the store knows of one replica.
type ReplicaStatus struct {
	// Name is the replica's host:port (no credentials).
	Name string `json:"name"`
	// OK is whether reads are sent to it: up, and within the lag bound.
	OK bool `json:"ok"`
	// Up is whether its last check answered, as a standby.
	Up bool `json:"up"`
	// LagSeconds is its lag at the last check.
	LagSeconds float64 `json:"lag_seconds"`
	// Error is why the last check failed, if it did.
	Error string `json:"error,omitempty"`
	// Reads counts the reads sent to it.
	Reads uint64 `json:"-"`
}

// Replicas reports each replica, in the order they were given, and how
// many reads that may lag went to the primary; nil without replicas.
func (s *Store) Replicas() (statuses []ReplicaStatus, primaryReads uint64) {
	rs := s.replicas
	if rs == nil {
		return nil, 0
	}
	now := time.Now()
	for _, r := range rs.replicas {
		st := ReplicaStatus{Name: r.name, Up: r.up.Load(), LagSeconds: math.Float64frombits(r.lag.Load()), Reads: r.reads.Load()}
		st.OK = rs.usable(r, now)
		if e, _ := r.err.Load().(string); e != "" && !st.Up {
			st.Error = e
		}
		statuses = append(statuses, st)
	}
	return statuses, rs.primaryReads.Load()
}

// AfterWrite remembers, for user userID's reads, the primary's WAL
// position now, which covers every write of that user that has
// committed. The server calls it after each request of a user that may
// have written. Without replicas it does nothing.
func (s *Store) AfterWrite(ctx context.Context, userID int64) {
	rs := s.replicas
	if rs == nil {
		return
	}
	lsn, err := rs.head.Get(ctx)
	if err != nil {
		lsn = math.MaxUint64 // unknown: the primary serves this user's reads for a while
	}
	rs.positions.put(userID, lsn, time.Now())
}

// reader is what a read that may lag queries: a replica that may serve
// ctx's read, or the primary.
func (s *Store) reader(ctx context.Context) reading {
	rs := s.replicas
	if rs == nil {
		return reading{s: s, pool: s.pool}
	}
	var need uint64
	if id, ok := userOf(ctx); ok {
		need = rs.positions.get(id, time.Now())
	}
	r := rs.pick(need, time.Now())
	if r == nil && need > 0 && need != math.MaxUint64 && rs.cfg.MaxWait > 0 {
		r = rs.wait(ctx, need)
	}
	if r == nil {
		rs.primaryReads.Add(1)
		return reading{s: s, pool: s.pool}
	}
	r.reads.Add(1)
	return reading{s: s, r: r, pool: r.pool}
}

// reading queries the pool reader chose, and the primary instead when a
// replica fails to answer (it is then skipped until a check finds it up).
type reading struct {
	s    *Store
	r    *replica
	pool *pgxpool.Pool
}

func (q reading) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := q.pool.Query(ctx, sql, args...)
	if err != nil && q.replicaFailed(ctx, err) {
		return q.s.pool.Query(ctx, sql, args...)
	}
	if err != nil || q.r == nil {
		return rows, err
	}
	return &readingRows{Rows: rows, q: q, ctx: ctx, sql: sql, args: args}, nil
}

// readingRows are a replica's rows: when the replica fails before the
// first row (pgx reports a lost connection from Next, not Query), the
// query runs again on the primary.
type readingRows struct {
	pgx.Rows
	q       reading
	ctx     context.Context
	sql     string
	args    []any
	started bool
	err     error
}

func (r *readingRows) Next() bool {
	if r.err != nil {
		return false
	}
	ok := r.Rows.Next()
	if !ok && !r.started {
		if err := r.Rows.Err(); err != nil && r.q.replicaFailed(r.ctx, err) {
			r.Rows.Close()
			rows, err := r.q.s.pool.Query(r.ctx, r.sql, r.args...)
			if err != nil {
				r.err = err
				return false
			}
			r.Rows = rows
			ok = rows.Next()
		}
	}
	r.started = true
	return ok
}

func (r *readingRows) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.Rows.Err()
}

func (q reading) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return readingRow{q: q, ctx: ctx, sql: sql, args: args}
}

type readingRow struct {
	q    reading
	ctx  context.Context
	sql  string
	args []any
}

func (r readingRow) Scan(dest ...any) error {
	err := r.q.pool.QueryRow(r.ctx, r.sql, r.args...).Scan(dest...)
	if err != nil && r.q.replicaFailed(r.ctx, err) {
		return r.q.s.pool.QueryRow(r.ctx, r.sql, r.args...).Scan(dest...)
	}
	return err
}

// replicaFailed reports whether err is the replica's failure rather than
// the query's answer, and if so marks the replica down.
func (q reading) replicaFailed(ctx context.Context, err error) bool {
	if q.r == nil || ctx.Err() != nil || errors.Is(err, pgx.ErrNoRows) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// 57: the server is shutting down or starting; 40001: a
		// standby cancelled the query for a conflict with recovery.
		if pe.Code[:2] != "57" && pe.Code != codeSerializationFailure {
			return false
		}
	}
	q.s.replicas.down(q.r, err)
	q.r.reads.Add(^uint64(0))
	q.s.replicas.primaryReads.Add(1)
	return true
}

// replicaSet is the store's replicas and what it knows of them.
type replicaSet struct {
	cfg          ReplicaConfig
	primary      *pgxpool.Pool
	replicas     []*replica
	next         atomic.Uint32 // round robin
	primaryReads atomic.Uint64
	positions    *positions
	// head reads the primary's current WAL position for AfterWrite, one
	// query for the writers that arrive together.
	head coalesce.Fresh[uint64]
	stop context.CancelFunc
	done chan struct{}

	mu      sync.Mutex
	samples []walSample // the primary's positions, oldest first
}

type replica struct {
	name     string
	pool     *pgxpool.Pool
	up       atomic.Bool
	replayed atomic.Uint64
	asOf     atomic.Int64  // unix ns: it has everything committed before
	lag      atomic.Uint64 // float64 bits, seconds, at the last check
	reads    atomic.Uint64
	err      atomic.Value // string
}

type walSample struct {
	at  time.Time
	lsn uint64
}

const (
	sqlPrimaryLSN = `SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint`
	sqlReplayLSN  = `SELECT pg_is_in_recovery(), COALESCE((pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint, 0)`
)

func newReplicaSet(ctx context.Context, primary *pgxpool.Pool, urls []string, opts []Option, rc ReplicaConfig) (*replicaSet, error) {
	rs := &replicaSet{cfg: rc, primary: primary, positions: newPositions(rc.MaxUsers, rc.MaxLag)}
	rs.head.Read = func(ctx context.Context) (uint64, error) {
		var lsn int64
		err := primary.QueryRow(ctx, sqlPrimaryLSN).Scan(&lsn)
		return uint64(lsn), err
	}
	seen := map[string]int{}
	for i, u := range urls {
		pc, _, err := poolConfig(u, opts)
		if err != nil {
			rs.close()
			return nil, fmt.Errorf("postgres: replica %d: cannot parse its URL", i+1)
		}
		pool, err := pgxpool.NewWithConfig(ctx, pc)
		if err != nil {
			rs.close()
			return nil, fmt.Errorf("postgres: replica %d: %w", i+1, err)
		}
		name := fmt.Sprintf("%s:%d", pc.ConnConfig.Host, pc.ConnConfig.Port)
		if seen[name]++; seen[name] > 1 {
			name = fmt.Sprintf("%s#%d", name, seen[name])
		}
		rs.replicas = append(rs.replicas, &replica{name: name, pool: pool})
	}
	rs.check(ctx)
	cctx, cancel := context.WithCancel(context.Background())
	rs.stop, rs.done = cancel, make(chan struct{})
	go rs.run(cctx)
	return rs, nil
}

func (rs *replicaSet) close() {
	if rs.stop != nil {
		rs.stop()
		<-rs.done
	}
	for _, r := range rs.replicas {
		r.pool.Close()
	}
}

func (rs *replicaSet) run(ctx context.Context) {
	defer close(rs.done)
	t := time.NewTicker(rs.cfg.Check)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			rs.check(ctx)
		}
	}
}

// check samples the primary's position, then measures every replica.
func (rs *replicaSet) check(ctx context.Context) {
	timeout := max(time.Second, rs.cfg.Check)
	at := time.Now()
	pctx, cancel := context.WithTimeout(ctx, timeout)
	var lsn int64
	err := rs.primary.QueryRow(pctx, sqlPrimaryLSN).Scan(&lsn)
	cancel()
	if err == nil {
		rs.mu.Lock()
		keep := at.Add(-2*rs.cfg.MaxLag - 2*timeout)
		i := 0
		for i < len(rs.samples)-1 && rs.samples[i].at.Before(keep) {
			i++
		}
		rs.samples = append(rs.samples[i:], walSample{at: at, lsn: uint64(lsn)})
		rs.mu.Unlock()
	}
	var wg sync.WaitGroup
	for _, r := range rs.replicas {
		wg.Go(func() {
			rctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			var standby bool
			var replayed int64
			if err := r.pool.QueryRow(rctx, sqlReplayLSN).Scan(&standby, &replayed); err != nil {
				rs.down(r, err)
				return
			}
			if !standby {
				rs.down(r, errors.New("not a standby: pg_is_in_recovery() is false"))
				return
			}
			rs.replayedTo(r, uint64(replayed))
			r.up.Store(true)
			lag := max(0, time.Since(time.Unix(0, r.asOf.Load())).Seconds())
			if err == nil && uint64(replayed) >= uint64(lsn) {
				lag = 0
			}
			r.lag.Store(math.Float64bits(lag))
		})
	}
	wg.Wait()
}

func (rs *replicaSet) down(r *replica, err error) {
	r.up.Store(false)
	r.err.Store(err.Error())
}

// replayedTo records that r has replayed up to lsn, and so everything
// committed before the latest sample at or below it.
func (rs *replicaSet) replayedTo(r *replica, lsn uint64) {
	for {
		old := r.replayed.Load()
		if lsn <= old || r.replayed.CompareAndSwap(old, lsn) {
			break
		}
	}
	rs.mu.Lock()
	var asOf time.Time
	for i := len(rs.samples) - 1; i >= 0; i-- {
		if rs.samples[i].lsn <= lsn {
			asOf = rs.samples[i].at
			break
		}
	}
	if asOf.IsZero() && len(rs.samples) > 0 {
		asOf = rs.samples[0].at.Add(-time.Nanosecond) // behind every sample kept: at least this old
	}
	rs.mu.Unlock()
	if !asOf.IsZero() && asOf.UnixNano() > r.asOf.Load() {
		r.asOf.Store(asOf.UnixNano())
	}
}

// usable reports whether r may serve reads that may lag.
func (rs *replicaSet) usable(r *replica, now time.Time) bool {
	return r.up.Load() && now.Sub(time.Unix(0, r.asOf.Load())) <= rs.cfg.MaxLag
}

// pick returns a usable replica that has replayed need, or nil.
func (rs *replicaSet) pick(need uint64, now time.Time) *replica {
	n := len(rs.replicas)
	start := int(rs.next.Add(1))
	for i := range n {
		r := rs.replicas[(start+i)%n]
		if rs.usable(r, now) && r.replayed.Load() >= need {
			return r
		}
	}
	return nil
}

// wait polls the usable replicas' positions until one has replayed need,
// for at most MaxWait, and returns it, or nil.
func (rs *replicaSet) wait(ctx context.Context, need uint64) *replica {
	deadline := time.Now().Add(rs.cfg.MaxWait)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	step := time.Millisecond
	for {
		for _, r := range rs.replicas {
			if !rs.usable(r, time.Now()) {
				continue
			}
			var standby bool
			var replayed int64
			if err := r.pool.QueryRow(ctx, sqlReplayLSN).Scan(&standby, &replayed); err != nil || !standby {
				continue
			}
			rs.replayedTo(r, uint64(replayed))
			if uint64(replayed) >= need {
				return r
			}
		}
		t := time.NewTimer(step)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		step = min(2*step, 10*time.Millisecond)
	}
}
