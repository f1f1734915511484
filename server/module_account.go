package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/input"
	"github.com/predictkit/predictkit/internal/coalesce"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/storage/postgres"
)

// AccountModule provides the account service, the Bearer-token
// authenticator and the auth routes: register, login, logout, GET and
// PATCH /auth/me, the web app's cookie session (module_session.go) and
// the personal API keys (module_apikeys.go) and the deposit addresses
// (module_addresses.go). The profile embeds positions, so it needs
// MarketModule.
var AccountModule = fx.Module("account",
	fx.Provide(newAccountService, newAuth, newProfiles, accountRoutes, sessionRoutes, apiKeyRoutes, accountCache,
		newAddresser, addressRoutes, profileMemoCache, profileWrites),
	fx.Invoke(cacheAuth, runAddressBackfill, followProfileChanges),
)

func newAccountService(store account.Store, cfg Config, addresses *account.Addresser, log *slog.Logger) *account.Service {
	s := account.NewService(store)
	s.Addresses, s.Log = addresses, log
	s.SignupBonus = cfg.Growth.SignupBonusKopecks
	if cfg.BcryptCost != 0 {
		s.BcryptCost = cfg.BcryptCost
	}
	if cfg.TokenTTL > 0 {
		s.TokenTTL = cfg.TokenTTL
	}
	return s
}

// authCache is a cache of what authenticates a request (tokens,
// partner keys) that trusts what it read from the store until it is told
// of a change. Each module with one adds it to the group "auth_caches",
// and cacheAuth drives them all from one feed of changes.
type authCache struct {
	// set turns the cache on for ttl, or off for 0.
	set        func(ttl time.Duration)
	invalidate func(account.Invalidation)
}

type authCacheOut struct {
	fx.Out
	Cache authCache `group:"auth_caches"`
}

func accountCache(accounts *account.Service) authCacheOut {
	return authCacheOut{Cache: authCache{set: accounts.CacheAuth, invalidate: accounts.Invalidate}}
}

type authCachesIn struct {
	fx.In
	Caches []authCache `group:"auth_caches"`
}

// cacheAuth turns on the authentication caches (Config.AuthCache) on a
// store that announces changes, and only while the announcements arrive,
// so that a logout, a role change or a disabled partner on another server
// takes effect here at once. Other stores get no cache: the memory
// store's look-up costs what the cache's does, and a custom store might be
// shared by processes that could not tell each other of a change.
func cacheAuth(lc fx.Lifecycle, cfg Config, caps Capabilities, in authCachesIn, metrics *Metrics, log *slog.Logger) {
	w := caps.AuthFeed
	if cfg.AuthCache <= 0 || w == nil {
		return
	}
	set := func(ttl time.Duration) {
		for _, c := range in.Caches {
			c.set(ttl)
		}
	}
	invalidate := func(inv account.Invalidation) {
		for _, c := range in.Caches {
			c.invalidate(inv)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			go func() {
				defer close(done)
				lost := false
				_ = w.WatchAuth(ctx, func(err error) {
					if err == nil {
						set(cfg.AuthCache)
						metrics.authCacheOn.Set(1)
						if lost {
							log.Info("auth cache on again: receiving auth changes")
						}
						lost = false
						return
					}
					set(0)
					metrics.authCacheOn.Set(0)
					if ctx.Err() == nil && !lost {
						log.Warn("auth cache off until auth changes can be received again", "err", err)
					}
					lost = true
				}, invalidate)
			}()
			return nil
		},
		OnStop: func(context.Context) error {
			cancel()
			<-done
			return nil
		},
	})
}

// Auth reads the caller from the Authorization header or, without one,
// from the web app's session cookie (see credentialToken).
type Auth struct {
	accounts *account.Service
	// origins checks where a request the cookie authenticates comes from.
	origins originPolicy
}

func newAuth(a *account.Service, cfg Config) *Auth {
	return &Auth{accounts: a, origins: newOriginPolicy(cfg)}
}

// bearer is the token of "Authorization: Bearer <token>", or "".
func bearer(c *fiber.Ctx) string {
	h := strings.TrimSpace(c.Get(fiber.HeaderAuthorization))
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// User is the authenticated caller, or account.ErrUnauthorized. A
// personal API key authenticates as its user; whether the key's scopes
// allow the route was checked before the handler ran (scopes.go).
func (a *Auth) User(c *fiber.Ctx) (*account.User, error) {
	cr, err := a.Credential(c)
	return cr.User, err
}

// Credential is what authenticated the caller: its user, and the
// personal API key when it was one. It is looked up once per request.
//
// The session cookie authenticates a request with an unsafe method only
// when it comes from a page of this server's origin (errCrossOrigin
// otherwise), and only as a session: a personal API key in the cookie
// is no credential (ErrUnauthorized), so a key's scopes always apply.
func (a *Auth) Credential(c *fiber.Ctx) (account.Credential, error) {
	tok, fromCookie := credentialToken(c)
	if tok == "" {
		return account.Credential{}, account.ErrUnauthorized
	}
	if fromCookie && unsafeMethod(c.Method()) && !a.origins.sameOrigin(c) {
		return account.Credential{}, errCrossOrigin
	}
	if u, ok := c.Locals(localUser).(*account.User); ok {
		k, _ := c.Locals(localAPIKey).(*account.APIKey)
		return account.Credential{User: u, Key: k}, nil // looked up already (scopes, rate limit)
	}
	cr, err := a.accounts.Credential(c.UserContext(), tok)
	if err == nil && fromCookie && cr.Key != nil {
		return account.Credential{}, account.ErrUnauthorized
	}
	if err == nil {
		c.Locals(localUserID, cr.User.ID) // for the access log and read-your-writes
		c.Locals(localUser, cr.User)
		c.SetUserContext(postgres.ForUser(c.UserContext(), cr.User.ID))
		if cr.Key != nil {
			c.Locals(localAPIKey, cr.Key)
			c.Locals(localAPIKeyID, cr.Key.ID) // for the access log
		}
	}
	return cr, err
}

// Optional is the caller when a valid token is sent, or nil (anonymous).
// A session cookie that may not authenticate the request (an unsafe
// method from another origin) reads anonymously too: where signing in is
// optional, nothing is done in the cookie's user's name.
func (a *Auth) Optional(c *fiber.Ctx) (*account.User, error) {
	if tok, _ := credentialToken(c); tok == "" {
		return nil, nil
	}
	u, err := a.User(c)
	if errors.Is(err, account.ErrUnauthorized) || errors.Is(err, errCrossOrigin) {
		return nil, nil
	}
	return u, err
}

// profiles builds the User profile: the user, balances, open positions
// valued now, the most recent closed positions and the figures.
type profiles struct {
	accounts *account.Service
	markets  *market.Service
	// memo, when set, keeps what GET /auth/me read (profile_memo.go);
	// last reads the last sequence number of the change log it follows,
	// one query for the requests that arrive together.
	memo *profileMemo
	last *coalesce.Fresh[int64]
}

// newProfiles keeps profiles in a memo where the authentication cache
// may be on (Config.AuthCache, a store that announces changes) and the
// change log can be followed: the memo depends on both.
func newProfiles(a *account.Service, m *market.Service, cfg Config, caps Capabilities, store Store, feed profileFeedIn) *profiles {
	p := &profiles{accounts: a, markets: m}
	if cl, ok := store.(ChangeLog); ok && cfg.AuthCache > 0 && caps.AuthFeed != nil && feed.Feed.Feed != nil {
		p.memo = newProfileMemo()
		p.last = &coalesce.Fresh[int64]{Read: func(ctx context.Context) (int64, error) {
			b, err := cl.ChangeBounds(ctx)
			return b.Last, err
		}}
	}
	return p
}

// build reads u's profile from the store.
func (p *profiles) build(ctx context.Context, u *account.User) (profileJSON, error) {
	parts, err := p.read(ctx, u.ID)
	if err != nil {
		return profileJSON{}, err
	}
	return p.view(u, parts), nil
}

// own is u's profile for u: from the memo when it keeps it.
func (p *profiles) own(ctx context.Context, u *account.User) (profileJSON, error) {
	var (
		parts profileParts
		ok    bool
		r     memoRead
	)
	if p.memo.serving() {
		last, err := p.last.Get(ctx)
		if err != nil {
			return profileJSON{}, err
		}
		parts, ok, r = p.memo.get(u.ID, last, time.Now())
	}
	if !ok {
		var err error
		if parts, err = p.read(ctx, u.ID); err != nil {
			return profileJSON{}, err
		}
		p.memo.put(u.ID, parts, r, time.Now())
	}
	return p.view(u, parts), nil
}

func (p *profiles) read(ctx context.Context, id int64) (profileParts, error) {
	var (
		r   profileParts
		err error
	)
	if r.balances, err = p.accounts.Balances(ctx, id); err != nil {
		return r, err
	}
	if r.open, err = p.markets.OpenPositions(ctx, id); err != nil {
		return r, err
	}
	if r.closed, err = p.markets.ClosedPositions(ctx, id, market.ClosedInProfile, 0); err != nil {
		return r, err
	}
	r.stats, err = p.markets.Stats(ctx, id)
	return r, err
}

func (p *profiles) view(u *account.User, r profileParts) profileJSON {
	v := profileView(u, r.balances, r.open, r.closed, r.stats)
	v.MayCreateEvents = u.IsCreator
	if pr := p.markets.Proposals; pr.On && !u.IsCreator {
		v.MayProposeEvents, v.ProposalAnteKopecks = true, pr.AnteKopecks
	}
	return v
}

// logoutHook runs at a user's logout, before the token is revoked (a
// hook that fails fails the logout, which the user may then send again);
// modules add theirs to the group "logout_hooks" (see chatLogoutHook), so
// that account needs to know none of them.
type logoutHook func(ctx context.Context, userID int64) error

type logoutHookOut struct {
	fx.Out
	Hook logoutHook `group:"logout_hooks"`
}

// accountRoutesIn is what the auth routes need.
type accountRoutesIn struct {
	fx.In
	Accounts *account.Service
	Auth     *Auth
	Profiles *profiles
	OnLogout []logoutHook `group:"logout_hooks"`
}

// accountHandlers serves the auth routes: register, login, logout, and
// the caller's profile.
type accountHandlers struct {
	accounts     *account.Service
	auth         *Auth
	profiles     *profiles
	onLogout     []logoutHook
	cookieSecure bool
}

// accountRoutes lists the auth routes. Each handler below follows its
// error table, which says what the route answers and in which order.
func accountRoutes(in accountRoutesIn, cfg Config) RoutesOut {
	h := &accountHandlers{accounts: in.Accounts, auth: in.Auth, profiles: in.Profiles, onLogout: in.OnLogout, cookieSecure: cfg.CookieSecure}
	return RoutesOut{Routes: []Route{
		{Method: http.MethodPost, Path: "/api/v1/auth/register", Errors: errsRegister, Handler: h.handleRegister},
		{Method: http.MethodPost, Path: "/api/v1/auth/login", Errors: errsLogin, Handler: h.handleLogin},
		{Method: http.MethodPost, Path: "/api/v1/auth/logout", Errors: errsLogout, Handler: h.handleLogout},
		{Method: http.MethodGet, Path: "/api/v1/auth/me", Errors: errsAuthMe, Handler: h.handleMe},
		{Method: http.MethodPatch, Path: "/api/v1/auth/me", Errors: errsUpdateProfile, Handler: h.handleUpdateProfile},
	}}
}

type registerBody struct {
	Email    string `json:"email" validate:"required"`
	Password string `json:"password" validate:"required"`
	Name     string `json:"name" validate:"required"`
	Language string `json:"language"`
	// ReferralCode, optional, is the inviting user's code.
	ReferralCode string `json:"referral_code"`
}

// POST /auth/register: create an account; answers the profile and an
// access token (201). Checks run 400 (body, then the account's fields,
// then invalid_referral_code), 409 email_taken.
var errsRegister = table("internal_error",
	on(account.ErrEmailTaken, http.StatusConflict, "email_taken"),
	errsRegisterReferral,
	on(input.ErrInvalid, http.StatusBadRequest, "invalid_request"),
)

// handleRegister creates an account and signs it in.
func (h *accountHandlers) handleRegister(c *fiber.Ctx) error {
	var b registerBody
	if err := decodeBody(c, &b); err != nil {
		return err
	}
	u, tok, err := h.accounts.Register(c.UserContext(), account.Registration{Email: b.Email, Password: b.Password, Name: b.Name, Language: b.Language,
		ReferralCode: b.ReferralCode})
	if err != nil {
		return err
	}
	v, err := h.profiles.build(c.UserContext(), u)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(fiber.Map{"user": v, "access_token": tok})
}

type loginBody struct {
	Email    string `json:"email" validate:"required"`
	Password string `json:"password" validate:"required"`
}

// POST /auth/login: log in with e-mail and password; answers a fresh
// access token and the profile. Checks run 400 (body), 401
// invalid_credentials (an unknown e-mail too, so that it tells nothing).
var errsLogin = table("internal_error",
	on(account.ErrInvalidCredentials, http.StatusUnauthorized, "invalid_credentials"),
	on(account.ErrUserNotFound, http.StatusUnauthorized, "invalid_credentials"),
)

// handleLogin signs a user in.
func (h *accountHandlers) handleLogin(c *fiber.Ctx) error {
	var b loginBody
	if err := decodeBody(c, &b); err != nil {
		return err
	}
	u, tok, err := h.accounts.Login(c.UserContext(), b.Email, b.Password)
	if err != nil {
		return err
	}
	v, err := h.profiles.build(c.UserContext(), u)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"access_token": tok, "user": v})
}

// POST /auth/logout: revoke the access token the request carries. Checks
// run 401.
var errsLogout = table("internal_error", unauthorized)

// handleLogout revokes the caller's token, after the logout hooks (the
// chat's ends the cookies of the user's chat sessions); a token that came
// in the session cookie clears the cookie too.
func (h *accountHandlers) handleLogout(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	for _, hook := range h.onLogout {
		if err := hook(c.UserContext(), u.ID); err != nil {
			return err
		}
	}
	tok, fromCookie := credentialToken(c)
	if err := h.accounts.Logout(c.UserContext(), tok); err != nil {
		return err
	}
	if fromCookie {
		clearSessionCookie(c, h.cookieSecure)
	}
	return c.JSON(fiber.Map{"status": "ok"})
}

// GET /auth/me: the caller's full profile. Checks run 401 UNAUTHORIZED
// (upper case here; also for a token whose user is gone).
var errsAuthMe = table("internal_error",
	on(account.ErrUnauthorized, http.StatusUnauthorized, "UNAUTHORIZED"),
	on(account.ErrUserNotFound, http.StatusUnauthorized, "UNAUTHORIZED"),
)

// handleMe answers the caller's profile.
func (h *accountHandlers) handleMe(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	v, err := h.profiles.own(c.UserContext(), u)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"user": v})
}

type profileBody struct {
	Name          *string `json:"name"`
	Nickname      *string `json:"nickname"`
	Language      *string `json:"language"`
	Theme         *string `json:"theme"`
	ProfileHidden *bool   `json:"profile_hidden"`
	AvatarURL     *string `json:"avatar_url"`
	// TelegramNotifications needs a linked chat to be turned on.
	TelegramNotifications *bool `json:"telegram_notifications"`
}

// PATCH /auth/me: change the caller's own profile; absent fields are left
// as they are. Checks run 401 UNAUTHORIZED (as GET /auth/me), 400 (body,
// then the fields), 409 nickname_taken, 409
// telegram_not_linked (telegram_notifications true without a linked chat).
var errsUpdateProfile = table("internal_error",
	on(account.ErrUnauthorized, http.StatusUnauthorized, "UNAUTHORIZED"),
	on(account.ErrUserNotFound, http.StatusUnauthorized, "UNAUTHORIZED"),
	on(account.ErrNicknameTaken, http.StatusConflict, "nickname_taken"),
	on(account.ErrTelegramNotLinked, http.StatusConflict, "telegram_not_linked").
		saying("telegram_notifications: link a Telegram chat first (POST /api/v1/auth/telegram/link)"),
	on(input.ErrInvalid, http.StatusBadRequest, "invalid_request"),
	on(errBadRequest, http.StatusBadRequest, "invalid_request"),
)

// handleUpdateProfile applies the patch and answers the new profile.
func (h *accountHandlers) handleUpdateProfile(c *fiber.Ctx) error {
	u, err := h.auth.User(c)
	if err != nil {
		return err
	}
	var b profileBody
	if err := decodeBody(c, &b); err != nil {
		return err
	}
	u, err = h.accounts.UpdateProfile(c.UserContext(), u.ID, account.ProfilePatch{
		Name: b.Name, Nickname: b.Nickname, Language: b.Language, Theme: b.Theme,
		ProfileHidden: b.ProfileHidden, AvatarURL: b.AvatarURL, TelegramNotifications: b.TelegramNotifications,
	})
	if err != nil {
		return err
	}
	v, err := h.profiles.build(c.UserContext(), u)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"user": v})
}
