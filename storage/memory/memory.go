// Package memory keeps every predictkit store in process memory: the
// embedded default for `go run`, tests and library users. It is safe for
// concurrent use; one mutex serializes every operation, which makes each
// one atomic. It never keeps a caller's string or pointer: everything is
// copied in and out.
package memory

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/growth"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/social"
)

// Store implements account.Store and market.Store in memory.
type Store struct {
	mu  sync.Mutex
	now func() time.Time

	seq map[string]int64

	users   map[int64]*userRec
	byEmail map[string]int64
	byNick  map[string]int64
	tokens  map[string]tokenRec
	resets  map[string]resetRec // password reset tokens, made on first use (passwords.go)

	accounts map[account.Ref]*ledgerAccount
	ledger   ledger

	events    map[int64]*market.Event // Pools left nil; assembled on read
	pools     map[int64]*market.Pool  // Markets left nil
	poolIDs   map[int64][]int64       // event → pools
	marketIDs map[int64][]int64       // pool → markets
	markets   map[int64]*market.Market
	positions map[int64]*market.Position
	open      map[openKey]int64
	byUser    map[int64][]int64 // user → positions
	trades    []*market.Trade
	tradesOf  map[int64][]*market.Trade
	tradesBy  map[int64][]*market.Trade // by user, in id order
	prices    map[int64][]market.PricePoint
	pnl       map[int64][]market.PnLEvent
	byKey     map[market.Key]*market.Trade
	subs      map[market.SubAccount]int64

	partners    map[int64]*partnerRec
	partnerKeys map[string]int64

	notifications map[int64][]*social.Notification // by user
	comments      commentTables                    // made on first use (comments.go)
	candles       map[candleKey][]market.Candle    // made on first use (candles.go)

	p2p  *p2pState  // made on first use (p2p.go)
	chat *chatState // made on first use (chat.go)

	tickets map[string]ticketRec // stream tickets, made on first use (stream.go)

	apiKeys *apiKeys              // personal API keys, made on first use (apikeys.go)
	wh      *webhookState         // partners' webhooks and deliveries, made on first use (webhooks.go)
	board   boardState            // the leaderboard's buckets (leaderboard.go)
	stats   *statsState           // the statistics' aggregates, made on first use (stats.go)
	tags    map[string]market.Tag // by slug, Events unset; made on first use (tags.go)
	prop    *proposals            // the challenge window's, made on first use (proposals.go)

	withdrawals *withdrawals // made on first use (withdrawals.go)

	// amends are the events' amendments, by event, oldest first; made on
	// first use (amend.go).
	amends map[int64][]market.Amendment
	// follows are who follows which event (follows.go).
	follows follows
	// deposits are the chains' token deposits and cursors, made on first
	// use (deposits.go).
	deposits *depositState
	// book is the address book (addresses.go); made on first use.
	book map[bookKey]account.DepositAddress

	// tg is the Telegram links, made on first use (telegram.go).
	tg *telegramState

	// changes is the change log (changes.go), appended to under mu.
	changes *changelog.Memory
	// growth holds the referral codes, referrals and volumes
	// (growth.go).
	growth growthState
}

type userRec struct {
	u    account.User
	hash string
}

type tokenRec struct {
	user    int64
	expires time.Time
}

type ledgerAccount struct {
	id      int64
	balance int64
	ref     uint32 // the account's number in the ledger
}

type openKey struct {
	user, market int64
	side         market.Side
}

var (
	_ account.Store = (*Store)(nil)
	_ market.Store  = (*Store)(nil)
)

// New returns an empty Store.
func New() *Store {
	return &Store{
		now:       func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) },
		seq:       map[string]int64{},
		users:     map[int64]*userRec{},
		byEmail:   map[string]int64{},
		byNick:    map[string]int64{},
		tokens:    map[string]tokenRec{},
		accounts:  map[account.Ref]*ledgerAccount{},
		events:    map[int64]*market.Event{},
		pools:     map[int64]*market.Pool{},
		poolIDs:   map[int64][]int64{},
		marketIDs: map[int64][]int64{},
		markets:   map[int64]*market.Market{},
		positions: map[int64]*market.Position{},
		open:      map[openKey]int64{},
		byUser:    map[int64][]int64{},
		tradesOf:  map[int64][]*market.Trade{},
		tradesBy:  map[int64][]*market.Trade{},
		prices:    map[int64][]market.PricePoint{},
		pnl:       map[int64][]market.PnLEvent{},
		byKey:     map[market.Key]*market.Trade{},
		subs:      map[market.SubAccount]int64{},

		partners:    map[int64]*partnerRec{},
		partnerKeys: map[string]int64{},

		notifications: map[int64][]*social.Notification{},

		changes: changelog.NewMemory(),
	}
}

// Ping always succeeds: memory is always there.
func (s *Store) Ping(context.Context) error { return nil }

// Close releases nothing; it exists so that every store closes alike.
func (s *Store) Close() {}

func (s *Store) next(name string) int64 {
	s.seq[name]++
	return s.seq[name]
}

// ---- users and tokens ----

// CreateUser implements account.Store.
func (s *Store) CreateUser(ctx context.Context, u *account.User, hash string) error {
	return s.Join(ctx, u, hash, account.Joining{})
}

// Join implements account.Store: under s.mu, the referrer's look-up, the
// user, the referral and the sign-up bonus are one step.
func (s *Store) Join(_ context.Context, u *account.User, hash string, j account.Joining) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	email := strings.ToLower(u.Email)
	if email != "" {
		if _, ok := s.byEmail[email]; ok {
			return account.ErrEmailTaken
		}
	}
	if u.Nickname != nil && *u.Nickname != "" {
		if _, ok := s.byNick[strings.ToLower(*u.Nickname)]; ok {
			return account.ErrNicknameTaken
		}
	}
	code := strings.ToUpper(u.ReferralCode)
	if code != "" {
		if _, ok := s.growth.byCode[code]; ok {
			return account.ErrReferralCodeTaken
		}
	}
	var referrer int64
	if j.Referral != "" {
		id, ok := s.growth.byCode[strings.ToUpper(j.Referral)]
		if !ok || s.users[id].u.PartnerID != 0 {
			return account.ErrInvalidReferralCode
		}
		referrer = id
	}
	created := s.now()
	var bonus []account.Posting
	if j.SignupBonus > 0 {
		// Checked before anything is written, for the id the user is
		// about to get: a refused bonus leaves no user behind.
		bonus = []account.Posting{growth.SignupBonus(s.seq["user"]+1, j.SignupBonus, created)}
		if err := s.check(bonus); err != nil {
			return err
		}
	}
	u.ID = s.next("user")
	u.CreatedAt = created
	rec := &userRec{u: cloneUser(*u), hash: strings.Clone(hash)}
	if u.PartnerID == 0 {
		s.countSignup(u.CreatedAt)
	}
	s.users[u.ID] = rec
	if email != "" {
		s.byEmail[email] = u.ID
	}
	if u.Nickname != nil && *u.Nickname != "" {
		s.byNick[strings.ToLower(*u.Nickname)] = u.ID
	}
	s.growth.join(code, u.ID, referrer, created)
	if bonus != nil {
		before := s.balancesOf(bonus)
		_ = s.post(bonus) // checked above
		s.logChanges(account.BalanceChanges(before, bonus, "", created)...)
	}
	return nil
}

func cloneUser(u account.User) account.User {
	u.Email = strings.Clone(u.Email)
	u.Name = strings.Clone(u.Name)
	u.ReferralCode = strings.Clone(u.ReferralCode)
	u.Language = strings.Clone(u.Language)
	u.Theme = strings.Clone(u.Theme)
	u.ExternalID = strings.Clone(u.ExternalID)
	u.TronAddress = strings.Clone(u.TronAddress)
	u.BscAddress = strings.Clone(u.BscAddress)
	u.PolygonAddress = strings.Clone(u.PolygonAddress)
	u.EthereumAddress = strings.Clone(u.EthereumAddress)
	u.Nickname = cloneStr(u.Nickname)
	u.AvatarURL = cloneStr(u.AvatarURL)
	return u
}

func cloneStr(p *string) *string {
	if p == nil {
		return nil
	}
	c := strings.Clone(*p)
	return &c
}

// User implements account.Store.
func (s *Store) User(_ context.Context, id int64) (*account.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.users[id]
	if !ok {
		return nil, account.ErrUserNotFound
	}
	u := cloneUser(rec.u)
	return &u, nil
}

// UserByEmail implements account.Store.
func (s *Store) UserByEmail(_ context.Context, email string) (*account.User, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.byEmail[strings.ToLower(email)]
	if !ok || email == "" {
		return nil, "", account.ErrUserNotFound
	}
	rec := s.users[id]
	u := cloneUser(rec.u)
	return &u, rec.hash, nil
}

// UpdateProfile implements account.Store.
func (s *Store) UpdateProfile(_ context.Context, id int64, p account.ProfilePatch) (*account.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.users[id]
	if !ok {
		return nil, account.ErrUserNotFound
	}
	u := rec.u
	if p.TelegramNotifications != nil && *p.TelegramNotifications && !u.TelegramVerified {
		return nil, account.ErrTelegramNotLinked
	}
	if p.Nickname != nil {
		old := ""
		if u.Nickname != nil {
			old = strings.ToLower(*u.Nickname)
		}
		nick := strings.ToLower(*p.Nickname)
		if nick != "" && nick != old {
			if _, taken := s.byNick[nick]; taken {
				return nil, account.ErrNicknameTaken
			}
		}
		if old != "" {
			delete(s.byNick, old)
		}
		if nick != "" {
			s.byNick[nick] = id
			u.Nickname = cloneStr(p.Nickname)
		} else {
			u.Nickname = nil
		}
	}
	if p.Name != nil {
		u.Name = strings.Clone(*p.Name)
	}
	if p.Language != nil {
		u.Language = strings.Clone(*p.Language)
	}
	if p.Theme != nil {
		u.Theme = strings.Clone(*p.Theme)
	}
	if p.ProfileHidden != nil {
		u.ProfileHidden = *p.ProfileHidden
	}
	if p.TelegramNotifications != nil {
		u.TelegramNotifications = *p.TelegramNotifications
	}
	if p.AvatarURL != nil {
		if *p.AvatarURL == "" {
			u.AvatarURL = nil
		} else {
			u.AvatarURL = cloneStr(p.AvatarURL)
		}
	}
	rec.u = u
	out := cloneUser(u)
	return &out, nil
}

// UpdateRoles implements account.Store.
func (s *Store) UpdateRoles(_ context.Context, id int64, p account.RolesPatch) (*account.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.users[id]
	if !ok {
		return nil, account.ErrUserNotFound
	}
	if p.IsCreator != nil {
		rec.u.IsCreator = *p.IsCreator
	}
	if p.IsStatsViewer != nil {
		rec.u.IsStatsViewer = *p.IsStatsViewer
	}
	out := cloneUser(rec.u)
	return &out, nil
}

// CreateToken implements account.Store.
func (s *Store) CreateToken(_ context.Context, hash []byte, userID int64, expires time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.users[userID]; !ok {
		return account.ErrUserNotFound
	}
	s.tokens[string(hash)] = tokenRec{user: userID, expires: expires}
	return nil
}

// UserByToken implements account.Store.
func (s *Store) UserByToken(_ context.Context, hash []byte, now time.Time) (*account.User, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[string(hash)]
	if !ok || !now.Before(t.expires) {
		return nil, time.Time{}, account.ErrUnauthorized
	}
	rec, ok := s.users[t.user]
	if !ok {
		return nil, time.Time{}, account.ErrUnauthorized
	}
	u := cloneUser(rec.u)
	return &u, t.expires, nil
}

// DeleteToken implements account.Store.
func (s *Store) DeleteToken(_ context.Context, hash []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tokens, string(hash))
	return nil
}

// ---- ledger ----

func (s *Store) acct(ref account.Ref) *ledgerAccount {
	a, ok := s.accounts[ref]
	if !ok {
		a = &ledgerAccount{id: s.next("ledger_account"), ref: s.ledger.account(ref)}
		s.accounts[ref] = a
	}
	return a
}

func (s *Store) balance(ref account.Ref) int64 {
	if a, ok := s.accounts[ref]; ok {
		return a.balance
	}
	return 0
}

// check applies postings to a copy of the current balances: nil if post
// would write them. Callers hold s.mu.
func (s *Store) check(ps []account.Posting) error {
	if len(ps) == 0 {
		return nil
	}
	touched := map[account.Ref]int64{}
	for _, p := range ps {
		touched[p.From] = s.balance(p.From)
		touched[p.To] = s.balance(p.To)
	}
	return account.Apply(touched, ps)
}

// post checks postings against the current balances and writes them all,
// or none (account.ErrInsufficientFunds, account.ErrBalanceLimit): the
// balances it writes are the ones account.Apply checked, so none wraps.
// Callers hold s.mu.
func (s *Store) post(ps []account.Posting) error {
	if err := s.check(ps); err != nil {
		return err
	}
	for _, p := range ps {
		from, to := s.acct(p.From), s.acct(p.To)
		from.balance -= p.Amount
		to.balance += p.Amount
		s.ledger.add(p, from.ref, to.ref)
	}
	return nil
}

// Transfer implements account.Store.
func (s *Store) Transfer(_ context.Context, ps []account.Posting) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for i := range ps {
		if ps[i].At.IsZero() {
			ps[i].At = now
		}
	}
	before := s.balancesOf(ps)
	if err := s.post(ps); err != nil {
		return err
	}
	s.logChanges(account.BalanceChanges(before, ps, "", now)...)
	return nil
}

// Balances implements account.Store.
func (s *Store) Balances(_ context.Context, id int64) (account.Balances, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return account.Balances{Balance: s.balance(account.UserAccount(id)), Bonus: s.balance(account.BonusAccount(id))}, nil
}

// Balance implements account.Store.
func (s *Store) Balance(_ context.Context, ref account.Ref) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.balance(ref), nil
}

// LedgerState implements account.Store.
func (s *Store) LedgerState(context.Context) ([]account.AccountState, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The sums are recomputed from the postings themselves, so that the
	// audit compares the cached balances with an independent figure.
	sums := s.ledger.sums()
	out := make([]account.AccountState, 0, len(s.accounts))
	for ref, a := range s.accounts {
		sum, fits := sums[a.ref].Int64()
		out = append(out, account.AccountState{Ref: ref, Balance: a.balance, PostingsSum: sum, PostingsSumOverflows: !fits})
	}
	slices.SortFunc(out, func(a, b account.AccountState) int { return cmp.Compare(s.accounts[a.Ref].id, s.accounts[b.Ref].id) })
	return out, int64(s.ledger.n), nil
}

// Postings returns every posting, oldest first (for tests and audits).
func (s *Store) Postings() []account.Posting {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(s.ledger.all())
}
