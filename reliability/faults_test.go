package reliability

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// withParam returns dbURL (a postgres:// URL) with one more query
// parameter, which pgx passes to the server as a run-time setting.
func withParam(t *testing.T, dbURL, key, value string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("parse the database URL: %v", err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// checkNo500 fails t if any request was answered with a status of 500 or
// more other than 503, and counts the 503s by code.
func checkNo500(t *testing.T, reqs []*sent) map[string]int {
	t.Helper()
	n503 := map[string]int{}
	for _, s := range reqs {
		switch {
		case s.status == http.StatusServiceUnavailable:
			n503[s.code]++
		case s.status >= 500:
			t.Errorf("a %s was answered %d %q: a database fault must be a 503", s.kind, s.status, s.code)
		}
	}
	for code := range n503 {
		if code != "database_unavailable" && code != "outcome_unknown" {
			t.Errorf("a 503 answered %q", code)
		}
	}
	return n503
}

// TestDatabaseFaults: the server stays up through database faults,
// answers 503 (never 500) while the database cannot serve it, says so on
// /readyz, recovers by itself, and loses no trade and runs none twice.
func TestDatabaseFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server: not in -short")
	}
	t.Run("connections terminated under load are retried or answered 503", testTerminatedConnections)
	t.Run("a PostgreSQL restart under load is answered 503 until the server recovers by itself", testRestart)
}

func testTerminatedConnections(t *testing.T) {
	// The server's connections carry an application_name of their own, so
	// that only they are terminated: other tests share this database.
	var b [6]byte
	_, _ = rand.Read(b[:])
	app := "predictkit-reliability-" + hex.EncodeToString(b[:])
	dbURL := withParam(t, pgtest.SchemaURL(t), "application_name", app)
	p := newProc(t, dbURL)
	p.start()
	fx := setup(t, p.base, 12, 4)

	ctx := context.Background()
	killer, err := pgx.Connect(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer killer.Close(ctx)

	l := startLoad(fx, 4, uint64(time.Now().UnixNano()))
	time.Sleep(500 * time.Millisecond)
	terminated, rounds := 0, 0
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); rounds++ {
		var n int
		err := killer.QueryRow(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND application_name = $1 AND pid <> pg_backend_pid()) k`, app).Scan(&n)
		if err != nil {
			t.Fatalf("terminate: %v", err)
		}
		terminated += n
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	reqs := l.finish()
	if !p.alive() {
		t.Fatal("the server died")
	}
	if err := p.waitReady(10 * time.Second); err != nil {
		t.Fatalf("after the faults: %v", err)
	}
	n503 := checkNo500(t, reqs)
	v := verify(t, dbURL, fx, reqs)
	auditOverHTTP(t, p.base())
	t.Logf("%d connections terminated in %d rounds; load: %s", terminated, rounds, loadStats(reqs))
	t.Logf("503s: %v; %s", n503, v)
	if terminated == 0 {
		t.Fatal("no connection was terminated: the fault was not injected")
	}
}

func testRestart(t *testing.T) {
	c := startCluster(t)
	p := newProc(t, c.URL())
	p.start()
	fx := setup(t, p.base, 12, 4)
	u := fx.users[0]

	l := startLoad(fx, 4, uint64(time.Now().UnixNano()))
	time.Sleep(time.Second)
	crashed := time.Now()
	c.crash()

	// While the database is down: the process answers, and says why not.
	probe := func(name, method, path string, headers map[string]string, body any, want int, wantCode string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		st, b, err := call(ctx, method, p.base()+path, headers, body)
		if err != nil || st != want || (wantCode != "" && errorCode(b) != wantCode) {
			t.Errorf("%s while PostgreSQL is down: %d %s %v, want %d %s", name, st, b, err, want, wantCode)
		}
	}
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 300 * time.Millisecond)
			probe("/healthz", http.MethodGet, "/healthz", nil, nil, http.StatusOK, "")
			probe("/readyz", http.MethodGet, "/readyz", nil, nil, http.StatusServiceUnavailable, "database_unavailable")
			probe("a buy", http.MethodPost, fmt.Sprintf("/api/v1/markets/%d/buy", fx.markets[0]), map[string]string{"Authorization": "Bearer " + u.token},
				map[string]any{"side": "YES", "amount_kopecks": 999}, http.StatusServiceUnavailable, "database_unavailable")
			probe("a partner bet", http.MethodPost, "/api/v1/partner/bet", map[string]string{"X-Partner-Key": fx.partnerKey},
				map[string]any{"external_user_id": "probe", "market_id": fx.markets[0], "side": "yes", "amount_kopecks": 999, "client_bet_id": fmt.Sprintf("probe-%d", i)},
				http.StatusServiceUnavailable, "database_unavailable")
		}()
	}
	wg.Wait()
	if !p.alive() {
		t.Fatal("the server died with its database")
	}
	c.start()
	back := time.Now()
	if err := p.waitReady(20 * time.Second); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	t.Logf("PostgreSQL was down %v; the server was ready again %v after it came back",
		back.Sub(crashed).Round(time.Millisecond), time.Since(back).Round(time.Millisecond))
	time.Sleep(1500 * time.Millisecond)
	reqs := l.finish()
	if !p.alive() {
		t.Fatal("the server died")
	}
	n503 := checkNo500(t, reqs)
	v := verify(t, c.URL(), fx, reqs)
	auditOverHTTP(t, p.base())
	t.Logf("load: %s", loadStats(reqs))
	t.Logf("503s: %v; %s", n503, v)
	if n503["database_unavailable"] == 0 {
		t.Error("the load met no 503 while PostgreSQL was down")
	}
}
