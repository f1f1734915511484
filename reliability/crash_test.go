package reliability

import (
	"flag"
	"testing"
	"time"

	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

var (
	flagKills    = flag.Int("kills", int(envUint("PREDICTKIT_CRASH_KILLS", 3)), "crash test: how many times the server is killed")
	flagKillLoad = flag.Duration("killevery", 1500*time.Millisecond, "crash test: load between two kills")
)

// TestCrash: the server on PostgreSQL, under load from users and a
// partner, is killed with SIGKILL several times in a row and restarted.
// Every trade that was answered 200 is in the trade log with its
// postings, no trade exists that was not asked for, and the audit holds.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server: not in -short")
	}
	dbURL := pgtest.SchemaURL(t)
	p := newProc(t, dbURL)
	p.start()
	fx := setup(t, p.base, 12, 4)

	l := startLoad(fx, 4, uint64(time.Now().UnixNano()))
	kills := *flagKills
	for range kills {
		time.Sleep(*flagKillLoad)
		p.kill()
		p.start()
	}
	time.Sleep(*flagKillLoad)
	reqs := l.finish()
	t.Logf("load: %s", loadStats(reqs))

	v := verify(t, dbURL, fx, reqs)
	auditOverHTTP(t, p.base())
	t.Logf("%d SIGKILLs: %s", kills, v)
	if v.answered == 0 {
		t.Fatal("no request was answered 200: the load did not run")
	}
}
