package postgres_test

import (
	"strings"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/wallet"
)

// Account 0 of the abandon mnemonic: public test keys, never to receive
// real money.
const (
	abandonEVMXPub  = "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt"
	abandonTronXPub = "xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd"
)

// bookOf10k fills a fresh store with 10,000 users and gives them their
// addresses with the backfill, and returns the EVM deriver.
func bookOf10k(t testing.TB, e *env) *wallet.Deriver {
	t.Helper()
	if _, err := e.store.DB().Exec(e.ctx, `INSERT INTO users (email, name, created_at)
		SELECT 'u' || i || '@example.com', 'U' || i, now() FROM generate_series(1, 10000) i`); err != nil {
		t.Fatal(err)
	}
	evm, err := wallet.NewDeriver(wallet.EVM, abandonEVMXPub)
	if err != nil {
		t.Fatal(err)
	}
	tron, err := wallet.NewDeriver(wallet.Tron, abandonTronXPub)
	if err != nil {
		t.Fatal(err)
	}
	n, err := account.NewAddresser(e.store, evm, tron).Backfill(e.ctx, account.DefaultBackfillBatch)
	if err != nil || n != 20_000 {
		t.Fatalf("backfill = %d, %v; want 20000 addresses", n, err)
	}
	if _, err := e.store.DB().Exec(e.ctx, `ANALYZE users; ANALYZE deposit_addresses`); err != nil {
		t.Fatal(err)
	}
	return evm
}

// TestAddressBookAtScale: 10,000 users are given their addresses by the
// backfill, a second backfill finds nothing to do, and a block's worth
// of addresses finds its owners through the book's primary key.
func TestAddressBookAtScale(t *testing.T) {
	e := newEnv(t)
	evm := bookOf10k(t, e)
	if ids, err := e.store.UsersToAddress(e.ctx, wallet.EVM, evm.Fingerprint(), 0, 10); err != nil || len(ids) != 0 {
		t.Errorf("users still to address: %v, %v", ids, err)
	}
	var ids []int64
	if err := e.store.DB().QueryRow(e.ctx, `SELECT array_agg(id ORDER BY id) FROM users WHERE id % 50 = 0`).Scan(&ids); err != nil {
		t.Fatal(err)
	}
	var addrs []string
	want := map[string]int64{}
	for _, id := range ids {
		a, err := evm.Address(id)
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, a)
		want[a] = id
	}
	got, err := e.store.AddressOwners(e.ctx, wallet.EVM, append(addrs, "0x0000000000000000000000000000000000000001"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("found %d owners, want %d", len(got), len(want))
	}
	for a, id := range want {
		if got[a] != id {
			t.Fatalf("owner of %s = %d, want %d", a, got[a], id)
		}
	}
	// With sequential scans priced out, as the other index tests do: on
	// a book this small a scan may cost less, and the planner picks it.
	plan := explain(t, e, postgres.SQLAddressOwners, string(wallet.EVM), addrs)
	if !strings.Contains(plan, "deposit_addresses_pkey") || strings.Contains(plan, "Seq Scan on deposit_addresses") {
		t.Errorf("the owners' look-up does not go through the primary key:\n%s", plan)
	}
}

// BenchmarkAddressOwners: the owners of a block's 200 transfers' addresses
// among 10,000 users' (20,000 addresses in the book).
func BenchmarkAddressOwners(b *testing.B) {
	e := newEnv(b)
	evm := bookOf10k(b, e)
	var addrs []string
	for id := int64(1); id <= 10_000; id += 50 {
		a, _ := evm.Address(id)
		addrs = append(addrs, a)
	}
	b.ResetTimer()
	for b.Loop() {
		if got, err := e.store.AddressOwners(e.ctx, wallet.EVM, addrs); err != nil || len(got) != len(addrs) {
			b.Fatalf("%d owners, %v", len(got), err)
		}
	}
}
