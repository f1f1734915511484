// Package storagetest is the conformance suite every predictkit store
// passes: the same behaviours, orderings and atomicity guarantees, run
// against storage/memory and storage/postgres alike. A store written by a
// library user can run it too:
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storagetest.Stores {
//			s := mystore.New(t)
//			return storagetest.Stores{Accounts: s, Markets: s}
//		})
//	}
package storagetest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/chat"
	"github.com/predictkit/predictkit/deposit"
	"github.com/predictkit/predictkit/growth"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/p2p"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/telegram"
	"github.com/predictkit/predictkit/webhook"
	"github.com/predictkit/predictkit/withdrawal"
	"golang.org/x/crypto/bcrypt"
)

// Stores are the stores under test. Accounts and Markets must share one
// ledger (usually they are the same value).
type Stores struct {
	Accounts account.Store
	Markets  market.Store
	Partners partner.Store
	// P2P and Chat, when set, run the P2P and support-chat suites.
	P2P  p2p.Store
	Chat chat.Store
	// Changes, when set, runs the change-log suite. It must be the change
	// log of Accounts and Markets.
	Changes ChangeLog
	// Webhooks, when set, runs the webhook suite. It must be the webhook
	// store of Accounts, Markets and Partners.
	Webhooks webhook.Store
	// Board, when set, runs the leaderboard suite. It must be the board of
	// Accounts and Markets.
	Board Board
	// Withdrawals, when set, runs the withdrawal suite. It must share
	// Accounts' ledger (and Changes', when set).
	Withdrawals withdrawal.Store
	// Deposits, when set, runs the deposits suite. It must share the
	// ledger of Accounts, and Changes must be set too.
	Deposits deposit.Store
	// Telegram, when set, runs the Telegram suite. It must be the
	// Telegram store of Accounts (and of Markets' notifications and
	// Changes, for the sender's cases).
	Telegram telegram.Store
	// Stats, when set, runs the statistics suite. It must be the
	// statistics of Accounts and Markets (and of Deposits and
	// Withdrawals, when set).
	Stats Stats
	// Growth, when set, runs the growth suite (referrals, levels, the
	// sign-up bonus). It must share Accounts' ledger, and Changes must be
	// set too.
	Growth growth.Store
}

// Run runs the whole suite; newStores returns fresh, empty stores for each
// subtest.
func Run(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Run("users", func(t *testing.T) { testUsers(t, newStores) })
	t.Run("user search", func(t *testing.T) { testSearchUsers(t, newStores) })
	t.Run("partner list", func(t *testing.T) { testListPartners(t, newStores) })
	t.Run("tokens", func(t *testing.T) { testTokens(t, newStores) })
	t.Run("passwords", func(t *testing.T) { testPasswords(t, newStores) })
	t.Run("api keys", func(t *testing.T) { testAPIKeys(t, newStores) })
	t.Run("password resets and api keys", func(t *testing.T) { testResetRevokesAPIKeys(t, newStores) })
	t.Run("own trade history", func(t *testing.T) { testUserTrades(t, newStores) })
	t.Run("a market's trade log in pages", func(t *testing.T) { testTradesAfter(t, newStores) })
	t.Run("ledger", func(t *testing.T) { testLedger(t, newStores) })
	t.Run("money bounds", func(t *testing.T) { testLimits(t, newStores) })
	t.Run("events", func(t *testing.T) { testEvents(t, newStores) })
	t.Run("tags", func(t *testing.T) { testTags(t, newStores) })
	t.Run("feed and search", func(t *testing.T) { testFeed(t, newStores) })
	t.Run("creator limits", func(t *testing.T) { testCreatorLimits(t, newStores) })
	t.Run("edits and amendments", func(t *testing.T) { testAmend(t, newStores) })
	t.Run("challenge window", func(t *testing.T) { testChallenge(t, newStores) })
	t.Run("proposals", func(t *testing.T) { testProposals(t, newStores) })
	t.Run("trading", func(t *testing.T) { testTrading(t, newStores) })
	t.Run("bonus money", func(t *testing.T) { testBonus(t, newStores) })
	t.Run("settlement", func(t *testing.T) { testSettlement(t, newStores) })
	t.Run("settlement in chunks", func(t *testing.T) { testSettlementChunks(t, newStores) })
	t.Run("trading window", func(t *testing.T) { testWindow(t, newStores) })
	t.Run("resolution", func(t *testing.T) { testResolution(t, newStores) })
	t.Run("feeds", func(t *testing.T) { testFeeds(t, newStores) })
	t.Run("concurrency", func(t *testing.T) { testConcurrency(t, newStores) })
	t.Run("partners", func(t *testing.T) { testPartners(t, newStores) })
	t.Run("notifications", func(t *testing.T) { testNotifications(t, newStores) })
	t.Run("comments", func(t *testing.T) { testComments(t, newStores) })
	t.Run("batching", func(t *testing.T) { testBatching(t, newStores) })
	t.Run("batching across markets", func(t *testing.T) { testBatchingMarkets(t, newStores) })
	t.Run("exclusive pools", func(t *testing.T) { testExclusive(t, newStores) })
	t.Run("answers added later", func(t *testing.T) { testAnswers(t, newStores) })
	t.Run("candles", func(t *testing.T) { testCandles(t, newStores) })
	t.Run("p2p", func(t *testing.T) { testP2P(t, newStores) })
	t.Run("chat", func(t *testing.T) { testChat(t, newStores) })
	t.Run("change log", func(t *testing.T) { testChanges(t, newStores) })
	t.Run("webhooks", func(t *testing.T) { testWebhooks(t, newStores) })
	t.Run("partner key rotation", func(t *testing.T) { testKeyRotation(t, newStores) })
	t.Run("leaderboard", func(t *testing.T) { testLeaderboard(t, newStores) })
	t.Run("follows", func(t *testing.T) { testFollows(t, newStores) })
	t.Run("deposits", func(t *testing.T) { testDeposits(t, newStores) })
	t.Run("address book", func(t *testing.T) { testAddresses(t, newStores) })
	t.Run("withdrawals", func(t *testing.T) { testWithdrawals(t, newStores) })
	t.Run("telegram", func(t *testing.T) { testTelegram(t, newStores) })
	t.Run("statistics", func(t *testing.T) { testStats(t, newStores) })
	t.Run("growth", func(t *testing.T) { testGrowth(t, newStores) })
}

// env is a fresh pair of services on fresh stores.
type env struct {
	t        *testing.T
	ctx      context.Context
	stores   Stores
	accounts *account.Service
	markets  *market.Service
	partners *partner.Service
}

func newEnv(t *testing.T, newStores func(t *testing.T) Stores) *env {
	t.Helper()
	st := newStores(t)
	acc := account.NewService(st.Accounts)
	acc.BcryptCost = bcrypt.MinCost
	e := &env{t: t, ctx: context.Background(), stores: st, accounts: acc, markets: market.NewService(st.Markets, acc)}
	if st.Partners != nil {
		e.partners = partner.NewService(st.Partners, st.Accounts, e.markets)
	}
	return e
}

var userSeq int

// user registers a user, credits it with balance and bonus, and returns it.
func (e *env) user(name string, balance, bonus int64) *account.User {
	e.t.Helper()
	userSeq++
	u, _, err := e.accounts.Register(e.ctx, account.Registration{Email: name + "-" + itoa(userSeq) + "@example.com", Password: "password123", Name: name})
	if err != nil {
		e.t.Fatalf("register %s: %v", name, err)
	}
	if balance > 0 {
		if _, err := e.accounts.Credit(e.ctx, u.ID, balance, false); err != nil {
			e.t.Fatalf("credit %s: %v", name, err)
		}
	}
	if bonus > 0 {
		if _, err := e.accounts.Credit(e.ctx, u.ID, bonus, true); err != nil {
			e.t.Fatalf("credit bonus %s: %v", name, err)
		}
	}
	return u
}

// creator returns a user allowed to create events.
func (e *env) creator() *account.User {
	e.t.Helper()
	u := e.user("creator", 0, 0)
	yes := true
	u, err := e.accounts.SetRoles(e.ctx, u.ID, account.RolesPatch{IsCreator: &yes})
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// event creates an active event with one pool of len(probs) markets.
func (e *env) event(creator *account.User, margin float64, b int64, probs ...float64) *market.Event {
	e.t.Helper()
	np := market.NewPool{Name: "Winner", NameRu: "Победитель", Rules: "Official result", Margin: margin, B: b}
	for i, p := range probs {
		np.Markets = append(np.Markets, market.NewMarket{Name: "Outcome " + itoa(i), Probability: p})
	}
	ev, err := e.markets.CreateEvent(e.ctx, creator, market.NewEvent{Name: "Final", NameRu: "Финал", Pools: []market.NewPool{np}})
	if err != nil {
		e.t.Fatalf("create event: %v", err)
	}
	active := true
	if err := e.markets.SetActive(e.ctx, creator.ID, ev.ID, &active); err != nil {
		e.t.Fatal(err)
	}
	ev.IsActive = true
	return ev
}

func (e *env) buy(u *account.User, m *market.Market, side market.Side, amount int64) (*market.Result, error) {
	return e.markets.Execute(e.ctx, m.ID, market.Request{UserID: u.ID, Side: side, Action: market.ActionBuy, Amount: amount})
}

func (e *env) sell(u *account.User, m *market.Market, side market.Side, shares int64) (*market.Result, error) {
	return e.markets.Execute(e.ctx, m.ID, market.Request{UserID: u.ID, Side: side, Action: market.ActionSell, Shares: shares})
}

func (e *env) balances(u *account.User) account.Balances {
	e.t.Helper()
	b, err := e.accounts.Balances(e.ctx, u.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

func (e *env) market(id int64) *market.Market {
	e.t.Helper()
	m, err := e.markets.Market(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// audit fails the test unless the ledger and every escrow check out.
func (e *env) audit() {
	e.t.Helper()
	r, err := e.accounts.Audit(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if !r.OK {
		e.t.Fatalf("ledger audit failed: %v", r.Problems)
	}
	problems, err := e.markets.AuditEscrows(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(problems) > 0 {
		e.t.Fatalf("escrow audit failed: %v", problems)
	}
}

// feeIncome is the platform's fee income: the sum over every market's fee
// account.
func (e *env) feeIncome() int64 {
	e.t.Helper()
	accts, _, err := e.stores.Accounts.LedgerState(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	var sum int64
	for _, a := range accts {
		if a.Ref.Kind == account.KindFees {
			sum += a.Balance
		}
	}
	return sum
}

func itoa(i int) string { return strconv.Itoa(i) }

func ptr[T any](v T) *T { return &v }

// within reports whether two times are within a second: stores may
// truncate precision.
func within(a, b time.Time) bool { d := a.Sub(b); return d < time.Second && d > -time.Second }
