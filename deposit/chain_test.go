package deposit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/deposit"
	"github.com/predictkit/predictkit/internal/evmtest"
	"github.com/predictkit/predictkit/storage/memory"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
	"github.com/predictkit/predictkit/wallet"
)

// chainStore is what the real-chain tests need of a store.
type chainStore interface {
	account.Store
	account.AddressBook
	deposit.Store
}

// onChain is a BSC test chain with a token of 18 decimals, a payer
// holding 1,000 tokens, and a user whose deposit address is in the
// store's address book.
type onChain struct {
	t        *testing.T
	ctx      context.Context
	chain    *evmtest.Chain
	token    common.Address
	payer    evmtest.Account
	store    chainStore
	accounts *account.Service
	user     *account.User
	address  common.Address
	cfg      deposit.Config
}

const chainConfirmations = 3

func newOnChain(t *testing.T, store chainStore) *onChain {
	t.Helper()
	ctx := context.Background()
	acc := account.NewService(store)
	acc.BcryptCost = bcrypt.MinCost
	u, _, err := acc.Register(ctx, account.Registration{Email: "chain@example.com", Password: "password123", Name: "Chain"})
	if err != nil {
		t.Fatal(err)
	}
	address := evmtest.NewAccount(t).Address
	if err := store.SetDepositAddresses(ctx, []account.DepositAddress{{Family: wallet.EVM,
		Address: wallet.Format(wallet.EVM, address), UserID: u.ID, Fingerprint: "test", CreatedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	chain := evmtest.Start(t, evmtest.Options{ChainID: wallet.Number(wallet.BSC)})
	token := chain.DeployToken(t, 18)
	payer := chain.Accounts[0]
	chain.Mint(t, token, payer.Address, evmtest.Units(1000, 18))
	chain.Commit(t)
	return &onChain{t: t, ctx: ctx, chain: chain, token: token, payer: payer, store: store, accounts: acc, user: u, address: address,
		cfg: deposit.Config{Chain: wallet.BSC, Token: token, Decimals: 18, Confirmations: chainConfirmations,
			KopecksPerToken: 9000, Poll: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Start: 1}}
}

// watcher is a new watcher reading url (the chain's, or a proxy's), as
// a freshly started server makes one.
func (o *onChain) watcher(url string) *deposit.Watcher {
	o.t.Helper()
	node := deposit.NewRPC(url)
	o.t.Cleanup(node.Close)
	w, err := deposit.New(o.cfg, node, o.store, o.store)
	if err != nil {
		o.t.Fatal(err)
	}
	return w
}

func (o *onChain) catchUp(w *deposit.Watcher) {
	o.t.Helper()
	for range 100 {
		done, err := w.Step(o.ctx)
		if err != nil {
			o.t.Fatalf("step: %v", err)
		}
		if done {
			return
		}
	}
	o.t.Fatal("the watcher never caught up")
}

// send transfers whole tokens from the payer to to, in a block of its
// own, and returns the block's number.
func (o *onChain) send(to common.Address, tokens int64) uint64 {
	o.t.Helper()
	o.chain.Transfer(o.t, o.token, o.payer, to, evmtest.Units(tokens, 18))
	o.chain.Commit(o.t)
	return o.chain.Head(o.t)
}

func (o *onChain) deposits() []deposit.Deposit {
	o.t.Helper()
	ds, err := o.store.UserDeposits(o.ctx, o.user.ID, 100, 0)
	if err != nil {
		o.t.Fatal(err)
	}
	return ds
}

func (o *onChain) balance() int64 {
	o.t.Helper()
	b, err := o.accounts.Balances(o.ctx, o.user.ID)
	if err != nil {
		o.t.Fatal(err)
	}
	return b.Balance
}

func (o *onChain) audit() {
	o.t.Helper()
	r, err := o.accounts.Audit(o.ctx)
	if err != nil || !r.OK {
		o.t.Fatalf("audit: %+v, %v", r, err)
	}
}

func TestChainDepositCreditedOnceAfterConfirmations(t *testing.T) {
	o := newOnChain(t, memory.New())
	w := o.watcher(o.chain.URL)
	block := o.send(o.address, 25)
	o.catchUp(w)
	seen := o.chain.Head(t)
	ds := o.deposits()
	if len(ds) != 1 || ds[0].Status != deposit.StatusPending || ds[0].BlockNumber != int64(block) || ds[0].TokenAmount() != "25" {
		t.Fatalf("seen at head %d: %+v; want one pending deposit of block %d", seen, ds, block)
	}
	for range chainConfirmations - 2 {
		o.chain.Mine(t, 1)
		o.catchUp(w)
		if ds := o.deposits(); ds[0].Status != deposit.StatusPending || o.balance() != 0 {
			t.Fatalf("at head %d, %d confirmations: %+v; want nothing credited", o.chain.Head(t), ds[0].Confirmations, ds)
		}
	}
	o.chain.Mine(t, 1)
	o.catchUp(w)
	credited := o.chain.Head(t)
	ds = o.deposits()
	if len(ds) != 1 || ds[0].Status != deposit.StatusCredited || ds[0].AmountKopecks != 225000 || o.balance() != 225000 {
		t.Fatalf("at head %d: %+v, balance %d; want 225000 kopecks credited", credited, ds, o.balance())
	}
	if credited-block+1 != chainConfirmations {
		t.Fatalf("credited at head %d for block %d; want at %d confirmations", credited, block, chainConfirmations)
	}
	t.Logf("deposit %d: transfer in block %d (tx %s), seen pending at head %d, credited at head %d (%d confirmations)",
		ds[0].ID, block, ds[0].TxHash, seen, credited, chainConfirmations)
	o.chain.Mine(t, 5)
	o.catchUp(w)
	if b := o.balance(); b != 225000 {
		t.Fatalf("balance %d after more blocks; want the deposit once", b)
	}
	o.audit()
}

func TestChainTransferToAnotherAddressIgnored(t *testing.T) {
	o := newOnChain(t, memory.New())
	w := o.watcher(o.chain.URL)
	o.send(evmtest.NewAccount(t).Address, 10)
	o.send(o.payer.Address, 1) // to oneself: no user's either
	o.chain.Mine(t, chainConfirmations)
	o.catchUp(w)
	if ds := o.deposits(); len(ds) != 0 || o.balance() != 0 {
		t.Fatalf("%+v; want nothing for other addresses", ds)
	}
	if st := w.Status(); !st.OK || st.Lag != 0 {
		t.Fatalf("status %+v", st)
	}
}

// duplicating is a proxy in front of a node that delivers every log of
// eth_getLogs twice.
func duplicating(t *testing.T, url string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		resp, err := http.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		var req struct{ Method string }
		var answer struct {
			JSONRPC string            `json:"jsonrpc"`
			ID      json.RawMessage   `json:"id"`
			Result  []json.RawMessage `json:"result"`
		}
		if json.Unmarshal(body, &req) == nil && req.Method == "eth_getLogs" && json.Unmarshal(out, &answer) == nil {
			answer.Result = append(answer.Result, answer.Result...)
			out, _ = json.Marshal(answer)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestChainDuplicateLogDeliveryCreditedOnce(t *testing.T) {
	o := newOnChain(t, memory.New())
	w := o.watcher(duplicating(t, o.chain.URL))
	o.send(o.address, 4)
	o.chain.Mine(t, chainConfirmations)
	o.catchUp(w)
	if ds := o.deposits(); len(ds) != 1 || ds[0].Status != deposit.StatusCredited || o.balance() != 36000 {
		t.Fatalf("%+v, balance %d; want one deposit of 36000 kopecks", ds, o.balance())
	}
	o.audit()
}

func TestChainServerKilledBetweenSeeingAndCrediting(t *testing.T) {
	o := newOnChain(t, memory.New())
	first := o.watcher(o.chain.URL)
	o.send(o.address, 2)
	o.catchUp(first)
	if ds := o.deposits(); len(ds) != 1 || ds[0].Status != deposit.StatusPending {
		t.Fatalf("%+v; want pending", ds)
	}
	// The first server dies here; the confirmations arrive meanwhile,
	// and a new server starts on the same store.
	o.chain.Mine(t, chainConfirmations)
	second := o.watcher(o.chain.URL)
	o.catchUp(second)
	if ds := o.deposits(); len(ds) != 1 || ds[0].Status != deposit.StatusCredited || o.balance() != 18000 {
		t.Fatalf("%+v, balance %d; want credited once by the new server", ds, o.balance())
	}
	o.audit()
}

func TestChainReorganisationRemovesAnUnconfirmedTransfer(t *testing.T) {
	o := newOnChain(t, memory.New())
	w := o.watcher(o.chain.URL)
	o.chain.Mine(t, 2)
	parent := o.chain.BlockHash(t, o.chain.Head(t))
	block := o.send(o.address, 7)
	o.catchUp(w)
	if ds := o.deposits(); len(ds) != 1 || ds[0].Status != deposit.StatusPending {
		t.Fatalf("%+v; want pending", ds)
	}
	// The transfer's block is replaced by a longer chain without it.
	o.chain.Fork(t, parent)
	o.chain.Mine(t, chainConfirmations+2)
	o.catchUp(w)
	if ds := o.deposits(); len(ds) != 0 || o.balance() != 0 {
		t.Fatalf("%+v, balance %d; want the transfer of replaced block %d gone, nothing credited", ds, o.balance(), block)
	}
	if n := o.chain.Head(t); n < block+chainConfirmations {
		t.Fatalf("head %d: the new chain is too short to have credited block %d", n, block)
	}
	o.audit()
}

func TestChainTwoInstancesOnPostgreSQLCreditOnce(t *testing.T) {
	pg := pgtest.New(t)
	o := newOnChain(t, pg)
	ctx, cancel := context.WithCancel(o.ctx)
	ws := []*deposit.Watcher{o.watcher(o.chain.URL), o.watcher(o.chain.URL)}
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() { _ = pg.Exclusive(ctx, "deposits:bsc", w.Run) })
	}
	// And two more with no lock at all, racing: still nothing twice.
	racers := []*deposit.Watcher{o.watcher(o.chain.URL), o.watcher(o.chain.URL)}
	for _, w := range racers {
		wg.Go(func() { _ = w.Run(ctx) })
	}
	defer func() { cancel(); wg.Wait() }()
	want := int64(0)
	for i := range 3 {
		o.send(o.address, int64(i+1))
		want += int64(i+1) * 9000
		o.chain.Mine(t, 1)
	}
	o.chain.Mine(t, chainConfirmations)
	deadline := time.Now().Add(20 * time.Second)
	for {
		ds := o.deposits()
		done := len(ds) == 3
		for _, d := range ds {
			done = done && d.Status == deposit.StatusCredited
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not all credited: %+v", ds)
		}
		time.Sleep(20 * time.Millisecond)
	}
	active := 0
	for _, w := range ws {
		if w.Status().Active {
			active++
		}
	}
	if active != 1 {
		t.Fatalf("%d of the locked watchers active; want 1", active)
	}
	if b := o.balance(); b != want {
		t.Fatalf("balance %d; want %d, each deposit once", b, want)
	}
	var credited int64
	for _, w := range append(ws, racers...) {
		credited += w.Status().Credited
	}
	if credited != 3 {
		t.Fatalf("the watchers credited %d times; want 3", credited)
	}
	o.audit()
}
