package deposit_test

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/deposit"
	"github.com/predictkit/predictkit/storage/memory"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
	"github.com/predictkit/predictkit/wallet"
)

// benchUsers is how many users have deposit addresses in the benchmark's
// address book.
const benchUsers = 10_000

// BenchmarkWatcherBlock is the watcher's cost per block on a chain whose
// every block carries 40 Transfer logs of the token, 10 of them to some
// of 10,000 users' addresses (in the store's address book) and 30 to
// other addresses, with 12 confirmations: per block, one pass reads the
// head, checks the newest block's hash, reads the block's logs, looks
// their 40 recipients up, records 10 pending deposits and credits the 10
// of the block 12 below. The node is a scripted JSON-RPC server on
// loopback HTTP, so the figure includes the JSON-RPC round trips but no
// network latency. On PostgreSQL (when PREDICTKIT_TEST_DATABASE_URL is
// set) the store's round trips are included too.
func BenchmarkWatcherBlock(b *testing.B) {
	b.Run("memory", func(b *testing.B) { benchWatcher(b, memory.New()) })
	if os.Getenv("PREDICTKIT_TEST_DATABASE_URL") != "" {
		b.Run("postgres", func(b *testing.B) { benchWatcher(b, pgtest.New(b)) })
	}
}

func benchWatcher(b *testing.B, store chainStore) {
	ctx := context.Background()
	entries := make([]account.DepositAddress, 0, benchUsers)
	for i := range benchUsers {
		u := &account.User{Email: fmt.Sprintf("bench%d@example.com", i), Name: "Bench", CreatedAt: time.Now()}
		if err := store.CreateUser(ctx, u, ""); err != nil {
			b.Fatal(err)
		}
		entries = append(entries, account.DepositAddress{Family: wallet.EVM, Address: wallet.Format(wallet.EVM, benchAddr(i)),
			UserID: u.ID, Fingerprint: "bench", CreatedAt: time.Now()})
	}
	for i := 0; i < len(entries); i += 1000 {
		if err := store.SetDepositAddresses(ctx, entries[i:i+1000]); err != nil {
			b.Fatal(err)
		}
	}
	token := addr(0xee)
	chain := newFakeChain(b, token)
	node := deposit.NewRPC(chain.srv.URL)
	defer node.Close()
	w, err := deposit.New(deposit.Config{Chain: wallet.BSC, Token: token, Decimals: 18, Confirmations: 12,
		KopecksPerToken: 9000, Start: 1}, node, store, store)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	block := func() {
		logs := make([]fakeLog, 0, 40)
		for j := range 40 {
			to := benchAddr(benchUsers + n*40 + j) // nobody's
			if j%4 == 0 {
				to = benchAddr((n*10 + j/4) % benchUsers)
			}
			logs = append(logs, fakeLog{to: to, units: big.NewInt(int64(1e18) + int64(j))})
		}
		n++
		chain.mine(1, logs...)
	}
	step := func() {
		if done, err := w.Step(ctx); err != nil || !done {
			b.Fatalf("step: %v, caught up %v", err, done)
		}
	}
	// Warm up past the confirmations, so that every block credits.
	for range 15 {
		block()
		step()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		block()
		b.StartTimer()
		step()
	}
	b.StopTimer()
	if st := w.Status(); st.Credited < int64(10*b.N) {
		b.Fatalf("credited %d for %d blocks", st.Credited, b.N)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/block")
}

// benchAddr is a distinct address for each i.
func benchAddr(i int) [20]byte {
	var a [20]byte
	a[0] = 0xbe
	a[16], a[17], a[18], a[19] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
	return a
}
