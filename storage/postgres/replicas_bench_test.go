package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// BenchmarkReplicaReads reads a user's trades (UserTrades, the history
// page's query) from parallel goroutines: on a store without replicas,
// on one whose replica serves them, and in the name of a user who has
// written (AfterWrite) once the replica has replayed it. primary-xact/op
// is the primary's transactions per read: the load the replica takes off
// it.
//
//	. .ci/replica.sh
//	go test ./storage/postgres -run '^$' -bench BenchmarkReplicaReads -benchtime 10000x -count 2
func BenchmarkReplicaReads(b *testing.B) {
	rp := pgtest.NewReplica(b)
	withReplica := rp.New(b, postgres.ReplicaConfig{MaxWait: 100 * time.Millisecond})
	u := newUser(b, withReplica)
	rp.CatchUp(b)
	alone, err := postgres.New(context.Background(), rp.PrimaryURL, postgres.WithSchema(rp.Schema))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(alone.Close)
	withReplica.AfterWrite(context.Background(), u.ID)
	rp.CatchUp(b)
	cases := []struct {
		name  string
		store *postgres.Store
		ctx   context.Context
	}{
		{"primary only", alone, context.Background()},
		{"replica", withReplica, context.Background()},
		{"replica, the user's own read after a write", withReplica, postgres.ForUser(context.Background(), u.ID)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			measure := b.N > 1 // not the first run, of one read
			var before int64
			if measure {
				b.StopTimer()
				before = primaryXacts(b, rp.PrimaryURL)
				b.StartTimer()
			}
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.store.UserTrades(c.ctx, u.ID, 0, 50); err != nil {
						b.Error(err)
						return
					}
				}
			})
			if measure {
				b.StopTimer()
				b.ReportMetric(float64(primaryXacts(b, rp.PrimaryURL)-before)/float64(b.N), "primary-xact/op")
			}
		})
	}
}

// primaryXacts is the primary database's committed transactions so far.
// A backend reports its counts at most once a second, and an idle one
// within 10 s: so it waits 11 s first.
func primaryXacts(b *testing.B, dbURL string) int64 {
	b.Helper()
	time.Sleep(11 * time.Second)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}
