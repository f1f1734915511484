package account

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/predictkit/predictkit/input"
	"golang.org/x/crypto/bcrypt"
)

// Limits on user input.
const (
	MinPasswordLen = 8
	MaxPasswordLen = 72 // bcrypt reads no further
	MaxNameLen     = 100
	MaxNicknameLen = 32
	MaxEmailLen    = 254
	MaxURLLen      = 2048
	// MaxCredit bounds one operator credit so that no sum of balances can
	// overflow int64: 10^13 kopecks is 100 billion RUB.
	MaxCredit = 10_000_000_000_000
)

// DefaultTokenTTL is how long an access token lives.
const DefaultTokenTTL = 30 * 24 * time.Hour

// Service is the account use cases: registration, log-in, tokens,
// passwords (change and reset), profile, deposits, roles and the ledger
// audit. It is safe for concurrent use.
type Service struct {
	store Store
	// BcryptCost is the password hashing cost; tests lower it.
	BcryptCost int
	// TokenTTL is how long an access token lives.
	TokenTTL time.Duration
	// Now is the clock; tests replace it.
	Now func() time.Time
	// Addresses, when set, gives each user registered its deposit
	// addresses.
	Addresses *Addresser
	// SignupBonus is credited to the bonus balance of every user who
	// registers (0: none), in the transaction that creates them.
	SignupBonus int64
	// Log, when set, is told of what went wrong without failing a
	// request (a registration whose addresses are given later).
	Log *slog.Logger
	// Invalidated, when set, is told of every Invalidation the
	// authentication cache applies, whether the service made it (a
	// profile or roles changed here) or was given it (Invalidate), so
	// that caches of what else a user sees can follow. Set it before the
	// service is used.
	Invalidated func(Invalidation)

	auth   authCache
	keyUse keyUses
}

// NewService returns a Service on store with production settings.
func NewService(store Store) *Service {
	return &Service{store: store, BcryptCost: bcrypt.DefaultCost, TokenTTL: DefaultTokenTTL, Now: func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }}
}

// Registration is what a person gives to sign up.
type Registration struct {
	Email    string
	Password string
	Name     string
	Language string // optional, "en" by default
	// ReferralCode, optional, is the code of the user who invited this
	// one, compared case-insensitively after trimming spaces.
	ReferralCode string
	// Seeded marks an account the operator's seeding makes (the demo's),
	// not a person signing up: it gets no sign-up bonus.
	Seeded bool
}

// Joining is what a registration asks of the store beside the user's
// row (Store.Join).
type Joining struct {
	// Referral is the referrer's code, trimmed and upper-cased; "" when
	// nobody referred the user.
	Referral string
	// SignupBonus is credited to the new user's bonus balance from
	// SignupBonuses (0: nothing is posted).
	SignupBonus int64
}

// MaxReferralCodeLen bounds a referral code given at registration; the
// codes the platform gives are 8 characters.
const MaxReferralCodeLen = 32

// NormalizeReferralCode is code as codes are compared: trimmed and
// upper-cased. ErrInvalidReferralCode for one no user could have
// (too long, or not letters and digits).
func NormalizeReferralCode(code string) (string, error) {
	code = strings.ToUpper(strings.TrimSpace(code))
	if len(code) > MaxReferralCodeLen {
		return "", ErrInvalidReferralCode
	}
	for _, c := range code {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return "", ErrInvalidReferralCode
		}
	}
	return code, nil
}

// Register creates a user and returns it with a fresh access token,
// recording who referred them (r.ReferralCode) and crediting the sign-up
// bonus (s.SignupBonus) in the same transaction. A person cannot refer
// themselves: the code they could give is not drawn until their account
// is made. ErrEmailTaken, ErrInvalidReferralCode, *input.Error.
func (s *Service) Register(ctx context.Context, r Registration) (*User, string, error) {
	email, err := NormalizeEmail(r.Email)
	if err != nil {
		return nil, "", err
	}
	referral, err := NormalizeReferralCode(r.ReferralCode)
	if err != nil {
		return nil, "", err
	}
	if err := CheckPassword("password", r.Password); err != nil {
		return nil, "", err
	}
	name, err := cleanName(r.Name)
	if err != nil {
		return nil, "", err
	}
	lang := r.Language
	if lang == "" {
		lang = "en"
	}
	if !slices.Contains(Languages, lang) {
		return nil, "", input.Invalid("language", "must be en or ru")
	}
	hash, err := s.hashPassword(r.Password)
	if err != nil {
		return nil, "", err
	}
	j := Joining{Referral: referral}
	if !r.Seeded {
		j.SignupBonus = s.SignupBonus
	}
	u := &User{Email: email, Name: name, Language: lang, Theme: "light", Level: 1}
	// A drawn code repeats one of n users' with odds n/32^8: a few tries
	// always find a free one.
	for try := 0; ; try++ {
		u.ReferralCode = randomCode()
		err := s.store.Join(ctx, u, hash, j)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrReferralCodeTaken) || try == 4 {
			return nil, "", err
		}
	}
	if s.Addresses != nil {
		// The account is made: should this fail, answering with the
		// error would tell the person to register again with an e-mail
		// that is now taken. It is there without addresses instead,
		// which the backfill at the next start, or the user's first look
		// at their deposit addresses, gives.
		if err := s.Addresses.Assign(ctx, u); err != nil && s.Log != nil {
			s.Log.Warn("account: deposit addresses not given at registration; given later", "user", u.ID, "err", err)
		}
	}
	tok, err := s.issueToken(ctx, u.ID)
	if err != nil {
		return nil, "", err
	}
	return u, tok, nil
}

// Login checks an e-mail and password and returns the user with a fresh
// access token. ErrInvalidCredentials; *input.Error for an e-mail that
// breaks the text rule (input.Text), which no account can have.
func (s *Service) Login(ctx context.Context, email, password string) (*User, string, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if err := input.Text("email", email); err != nil {
		return nil, "", err
	}
	u, hash, err := s.store.UserByEmail(ctx, email)
	if errors.Is(err, ErrUserNotFound) || (err == nil && hash == "") {
		// Spend the time a real comparison would, so that response time
		// does not tell which e-mails are registered.
		_ = bcrypt.CompareHashAndPassword(s.dummyHash(), []byte(password))
		return nil, "", ErrInvalidCredentials
	}
	if err != nil {
		return nil, "", err
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) != nil {
		return nil, "", ErrInvalidCredentials
	}
	tok, err := s.issueToken(ctx, u.ID)
	if err != nil {
		return nil, "", err
	}
	return u, tok, nil
}

// dummyHash is the stand-in hash an unknown e-mail's password is compared
// with: made at s.BcryptCost, as the hashes of registered users are, so
// that the comparison takes as long as theirs. One is made per cost, on
// first use, and shared by every Service.
func (s *Service) dummyHash() []byte {
	cost := s.BcryptCost
	if cost < bcrypt.MinCost {
		cost = bcrypt.DefaultCost // what GenerateFromPassword, and so Register, uses
	}
	v, _ := standIns.LoadOrStore(cost, &standIn{})
	d := v.(*standIn)
	d.once.Do(func() {
		h, err := bcrypt.GenerateFromPassword([]byte("not a real password"), cost)
		if err != nil { // a cost above bcrypt's maximum: Register fails too
			h, _ = bcrypt.GenerateFromPassword([]byte("not a real password"), bcrypt.MinCost)
		}
		d.hash = h
	})
	return d.hash
}

// standIns are the stand-in hashes by cost (int → *standIn).
var standIns sync.Map

type standIn struct {
	once sync.Once
	hash []byte
}

// Authenticate returns the user an access token or a personal API key
// belongs to, or ErrUnauthorized. It does not say which it was, nor a
// key's scopes: a caller that serves keys checks them with Credential.
func (s *Service) Authenticate(ctx context.Context, token string) (*User, error) {
	c, err := s.Credential(ctx, token)
	if err != nil {
		return nil, err
	}
	return c.User, nil
}

// CacheAuth lets Authenticate answer from memory, for up to ttl after it
// read a token from the store, instead of asking the store on every
// request; ttl ≤ 0 turns the cache off and empties it. It is off in a new
// Service.
//
// Logout, UpdateProfile, SetRoles, ChangePassword and ResetPassword on s
// take effect at once. Changes
// made anywhere else (another process on the same database, SQL by hand)
// reach s only through Invalidate; without that, a revoked token still
// authenticates here, and a changed user is seen as it was, for up to
// ttl.
func (s *Service) CacheAuth(ttl time.Duration) { s.auth.set(ttl) }

// Invalidate drops the cached authentications inv names (see CacheAuth).
func (s *Service) Invalidate(inv Invalidation) { s.invalidate(inv) }

func (s *Service) invalidate(inv Invalidation) {
	s.auth.invalidate(inv)
	if s.Invalidated != nil {
		s.Invalidated(inv)
	}
}

// Logout revokes token.
func (s *Service) Logout(ctx context.Context, token string) error {
	hash := HashToken(token)
	err := s.store.DeleteToken(ctx, hash)
	s.invalidate(Invalidation{TokenHash: hash})
	return err
}

// HashToken is how an access token is stored: only its SHA-256, so a
// leaked database holds no usable token. Tokens are 256 random bits, so a
// fast hash is enough (no password-style stretching is needed).
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

func (s *Service) issueToken(ctx context.Context, userID int64) (string, error) {
	tok := NewSecret()
	if err := s.store.CreateToken(ctx, HashToken(tok), userID, s.Now().Add(s.TokenTTL)); err != nil {
		return "", err
	}
	return tok, nil
}

// NewSecret returns 256 random bits, URL-safe base64: an access token, a
// partner key or a chat session cookie.
func NewSecret() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("account: no randomness: " + err.Error()) // crypto/rand never fails on Linux
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func randomCode() string {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("account: no randomness: " + err.Error())
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}

// User returns user id. ErrUserNotFound.
func (s *Service) User(ctx context.Context, id int64) (*User, error) {
	return s.store.User(ctx, id)
}

// Balances returns user id's balances.
func (s *Service) Balances(ctx context.Context, id int64) (Balances, error) {
	return s.store.Balances(ctx, id)
}

// UpdateProfile changes the caller's own profile. *input.Error,
// ErrNicknameTaken.
func (s *Service) UpdateProfile(ctx context.Context, id int64, p ProfilePatch) (*User, error) {
	if p.Name != nil {
		n, err := cleanName(*p.Name)
		if err != nil {
			return nil, err
		}
		p.Name = &n
	}
	if p.Nickname != nil {
		n := strings.TrimSpace(*p.Nickname)
		if n != "" && !validNickname(n) {
			return nil, input.Invalid("nickname", fmt.Sprintf("must be 3 to %d letters, digits or _", MaxNicknameLen))
		}
		p.Nickname = &n
	}
	if p.Language != nil && !slices.Contains(Languages, *p.Language) {
		return nil, input.Invalid("language", "must be en or ru")
	}
	if p.Theme != nil && !slices.Contains(Themes, *p.Theme) {
		return nil, input.Invalid("theme", "must be light, dark or system")
	}
	if p.AvatarURL != nil && *p.AvatarURL != "" {
		if len(*p.AvatarURL) > MaxURLLen || !(strings.HasPrefix(*p.AvatarURL, "https://") || strings.HasPrefix(*p.AvatarURL, "http://")) || !utf8.ValidString(*p.AvatarURL) {
			return nil, input.Invalid("avatar_url", "must be an http(s) URL")
		}
		if err := input.Text("avatar_url", *p.AvatarURL); err != nil {
			return nil, err
		}
	}
	defer s.invalidate(Invalidation{UserID: id})
	return s.store.UpdateProfile(ctx, id, p)
}

// SetRoles is the operator's change of a user's roles. ErrUserNotFound.
func (s *Service) SetRoles(ctx context.Context, id int64, p RolesPatch) (*User, error) {
	defer s.invalidate(Invalidation{UserID: id})
	return s.store.UpdateRoles(ctx, id, p)
}

// Credit is an operator's deposit of amount kopecks to user id's balance,
// or to its bonus balance when bonus is set. It returns the new balances.
func (s *Service) Credit(ctx context.Context, id int64, amount int64, bonus bool) (Balances, error) {
	if err := input.InRange("amount_kopecks", amount, 1, MaxCredit); err != nil {
		return Balances{}, err
	}
	if _, err := s.store.User(ctx, id); err != nil {
		return Balances{}, err
	}
	to := UserAccount(id)
	if bonus {
		to = BonusAccount(id)
	}
	if err := s.store.Transfer(ctx, []Posting{{From: External, To: to, Amount: amount, Reason: "deposit", At: s.Now()}}); err != nil {
		return Balances{}, LimitAsInput("amount_kopecks", err)
	}
	return s.store.Balances(ctx, id)
}

// Audit checks the whole ledger.
func (s *Service) Audit(ctx context.Context) (Report, error) {
	accounts, postings, err := s.store.LedgerState(ctx)
	if err != nil {
		return Report{}, err
	}
	return Check(accounts, postings, s.Now()), nil
}

// NormalizeEmail is how an e-mail is stored and compared: trimmed and in
// lower case. *input.Error when it is no plain address (a display name,
// no domain, control characters, longer than MaxEmailLen).
func NormalizeEmail(e string) (string, error) {
	e = strings.ToLower(strings.TrimSpace(e))
	if e == "" || len(e) > MaxEmailLen || !input.IsText(e) {
		return "", input.Invalid("email", "must be an e-mail address")
	}
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e || !strings.Contains(e[strings.LastIndexByte(e, '@'):], ".") {
		return "", input.Invalid("email", "must be an e-mail address")
	}
	return e, nil
}

func cleanName(n string) (string, error) {
	n = strings.TrimSpace(n)
	if n == "" || !input.IsText(n) || utf8.RuneCountInString(n) > MaxNameLen {
		return "", input.Invalid("name", fmt.Sprintf("must be 1 to %d characters", MaxNameLen))
	}
	return n, nil
}

func validNickname(n string) bool {
	if len(n) < 3 || len(n) > MaxNicknameLen {
		return false
	}
	for _, r := range n {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}
