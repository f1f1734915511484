package server

// The JSON shapes of the API. Field names are the interface's; money is
// int64 kopecks, shares are int64 (one share pays 1 kopeck), prices in
// basis points (10000 = 1 RUB per token), probabilities fractions 0..1,
// timestamps RFC 3339 in UTC.

import (
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/partner"
)

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func sideRu(s market.Side) string {
	if s == market.Yes {
		return "ДА"
	}
	return "НЕТ"
}

// marketJSON is a Market.
type marketJSON struct {
	ID             int64   `json:"id"`
	PoolID         int64   `json:"pool_id"`
	EventID        int64   `json:"event_id"`
	Name           string  `json:"name"`
	NameRu         string  `json:"name_ru"`
	YesProbability float64 `json:"yes_probability"`
	MarketType     string  `json:"market_type"`
	Volume         int64   `json:"volume"`
	B              int64   `json:"b"`
	QYes           int64   `json:"q_yes"`
	QNo            int64   `json:"q_no"`
	Paused         bool    `json:"paused"`
	TradingOpen    bool    `json:"trading_open"`
	Resolved       bool    `json:"resolved"`
	// Settling is true while the market's holders are being paid, chunk
	// by chunk (a large market on PostgreSQL): it takes no trade, and
	// turns resolved when the last holder is paid.
	Settling       bool    `json:"settling"`
	WinningOutcome *string `json:"winning_outcome"`
	OutcomeIndex   int     `json:"outcome_index"`
	YesName        string  `json:"yes_name"`
	NoName         string  `json:"no_name"`
	// ResolvedAt and ResolvedBy ("creator" or "operator") are null while
	// the market is unresolved.
	ResolvedAt *string `json:"resolved_at"`
	ResolvedBy *string `json:"resolved_by"`
	// Other marks the Other answer of an exclusive pool.
	Other bool `json:"other"`
	// Resolution is the creator's proposed outcome while it waits out
	// its challenge window or the operator; absent otherwise.
	Resolution *resolutionJSON `json:"resolution,omitempty"`
	// Sparkline is the market's YES probability hour by hour over the
	// last 24 hours, oldest first; on the feed's markets only.
	Sparkline []float64 `json:"sparkline,omitempty"`
}

// resolutionJSON is a market's open proposal (market.ResolutionProposal) as that
// market sees it.
type resolutionJSON struct {
	Proposed       string `json:"proposed"`
	By             int64  `json:"by"`
	ChallengeUntil string `json:"challenge_until"`
	Disputed       bool   `json:"disputed"`
}

// resolutionView is p as market m (of p's market or pool) sees it; nil
// when p is nil or done.
func resolutionView(p *market.ResolutionProposal, m *market.Market) *resolutionJSON {
	if p == nil || p.Done {
		return nil
	}
	return &resolutionJSON{Proposed: p.OutcomeFor(m), By: p.By, ChallengeUntil: ts(p.ChallengeUntil), Disputed: p.Disputed}
}

// marketView is m as seen at now: trading_open says whether it takes
// trades then.
func marketView(m *market.Market, now time.Time) marketJSON {
	v := marketJSON{
		ID: m.ID, PoolID: m.PoolID, EventID: m.EventID, Name: m.Name, NameRu: m.NameRu,
		YesProbability: m.YesProbability(), MarketType: market.MarketTypeLMSR,
		Volume: m.Volume, B: m.B, QYes: m.QYes, QNo: m.QNo,
		Paused: m.Paused, TradingOpen: m.Tradable(now), Resolved: m.Resolved, Settling: m.Settling, OutcomeIndex: m.OutcomeIndex,
		YesName: m.YesName, NoName: m.NoName, Other: m.Other, Sparkline: m.Sparkline,
	}
	if w := m.Outcome(); w != "" {
		v.WinningOutcome = &w
	}
	if m.ResolvedAt != nil {
		at := ts(*m.ResolvedAt)
		v.ResolvedAt = &at
	}
	if m.ResolvedBy != "" {
		by := string(m.ResolvedBy)
		v.ResolvedBy = &by
	}
	return v
}

// poolJSON is a Pool.
type poolJSON struct {
	ID       int64   `json:"id"`
	EventID  int64   `json:"event_id"`
	Name     string  `json:"name"`
	NameRu   string  `json:"name_ru"`
	Rules    string  `json:"rules"`
	RulesRu  string  `json:"rules_ru"`
	WonSide  *int    `json:"won_side"`
	Margin   float64 `json:"margin"`
	FinishAt string  `json:"finish_at"`
	LiveAt   string  `json:"live_at"`
	// Exclusive pools price their markets as one n-outcome LMSR; their
	// YES probabilities sum to 1.
	Exclusive bool         `json:"exclusive"`
	Markets   []marketJSON `json:"markets"`
	Metadata  poolMetadata `json:"metadata"`
}

type poolMetadata struct {
	MarketNames         []string  `json:"market_names"`
	MarketProbabilities []float64 `json:"market_probabilities"`
	LMSRBKopecks        int64     `json:"lmsr_b_kopecks"`
}

func poolView(p *market.Pool, now time.Time) poolJSON {
	v := poolJSON{
		ID: p.ID, EventID: p.EventID, Name: p.Name, NameRu: p.NameRu, Rules: p.Rules, RulesRu: p.RulesRu,
		WonSide: p.WonSide, Margin: p.Margin, FinishAt: ts(p.FinishAt), LiveAt: ts(p.LiveAt), Exclusive: p.Exclusive,
		Markets: make([]marketJSON, 0, len(p.Markets)),
		Metadata: poolMetadata{
			MarketNames:         make([]string, 0, len(p.Markets)),
			MarketProbabilities: make([]float64, 0, len(p.Markets)),
			LMSRBKopecks:        p.B,
		},
	}
	for _, m := range p.Markets {
		mv := marketView(m, now)
		v.Markets = append(v.Markets, mv)
		v.Metadata.MarketNames = append(v.Metadata.MarketNames, mv.Name)
		v.Metadata.MarketProbabilities = append(v.Metadata.MarketProbabilities, mv.YesProbability)
	}
	return v
}

// eventJSON is an Event.
type eventJSON struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	NameRu    string     `json:"name_ru"`
	CreatorID int64      `json:"creator_id"`
	IsActive  bool       `json:"is_active"`
	CreatedAt string     `json:"created_at"`
	Tags      []string   `json:"tags"`
	Pools     []poolJSON `json:"pools"`
	// Amendments are the creator's notes, oldest first (module_amend.go).
	Amendments []amendmentJSON `json:"amendments"`
	// Status is approved, proposed or rejected; Proposal is set on an
	// event a user proposed (docs/proposals.md).
	Status   string        `json:"status"`
	Proposal *proposalJSON `json:"proposal,omitempty"`
	// What the feed adds (GET /events, market.FeedStats): the volumes
	// and the end of trading; absent elsewhere.
	VolumeKopecks    *int64  `json:"volume_kopecks,omitempty"`
	Volume24hKopecks *int64  `json:"volume_24h_kopecks,omitempty"`
	ClosesAt         *string `json:"closes_at,omitempty"`
}

// proposalJSON is what an event holds as a proposal: the ante and, once
// the operator decided, when, why (a rejection's reason) and whether a
// rejection gave the ante back.
type proposalJSON struct {
	AnteKopecks int64   `json:"ante_kopecks"`
	DecidedAt   *string `json:"decided_at"`
	Reason      string  `json:"reason"`
	Refunded    bool    `json:"refunded"`
}

func eventView(e *market.Event, now time.Time) eventJSON {
	v := eventJSON{ID: e.ID, Name: e.Name, NameRu: e.NameRu, CreatorID: e.CreatorID, IsActive: e.IsActive,
		CreatedAt: ts(e.CreatedAt), Tags: e.Tags, Pools: make([]poolJSON, 0, len(e.Pools)), Status: e.Status}
	if v.Status == "" {
		v.Status = market.StatusApproved
	}
	if p := e.Proposal; p != nil {
		v.Proposal = &proposalJSON{AnteKopecks: p.Ante, Reason: p.Reason, Refunded: p.Refunded}
		if p.DecidedAt != nil {
			at := ts(*p.DecidedAt)
			v.Proposal.DecidedAt = &at
		}
	}
	if v.Tags == nil { // always an array
		v.Tags = []string{}
	}
	for _, p := range e.Pools {
		v.Pools = append(v.Pools, poolView(p, now))
	}
	if st := e.Stats; st != nil {
		closes := ts(st.ClosesAt)
		v.VolumeKopecks, v.Volume24hKopecks, v.ClosesAt = &st.Volume, &st.Volume24h, &closes
	}
	v.Amendments = make([]amendmentJSON, 0, len(e.Amendments))
	for i := range e.Amendments {
		v.Amendments = append(v.Amendments, amendmentView(&e.Amendments[i]))
	}
	return v
}

// positionJSON is an open position (PositionWithDetails): amount is the
// shares held, avg_price the average price paid in basis points,
// unrealized_pnl what selling it all now would return minus its cost.
type positionJSON struct {
	ID            int64  `json:"id"`
	UserID        int64  `json:"user_id"`
	MarketID      int64  `json:"market_id"`
	TokenType     string `json:"token_type"`
	Amount        int64  `json:"amount"`
	AvgPrice      int64  `json:"avg_price"`
	UseBonus      bool   `json:"use_bonus"`
	CreatedAt     string `json:"created_at"`
	EventID       int64  `json:"event_id"`
	EventName     string `json:"event_name"`
	PoolID        int64  `json:"pool_id"`
	PoolName      string `json:"pool_name"`
	MarketName    string `json:"market_name"`
	Side          string `json:"side"`
	SideRu        string `json:"side_ru"`
	UnrealizedPnL int64  `json:"unrealized_pnl"`
	// CostKopecks and ValueKopecks are what the shares held cost and what
	// selling them now would return.
	CostKopecks  int64 `json:"cost_kopecks"`
	ValueKopecks int64 `json:"value_kopecks"`
}

func positionView(p market.OpenPosition) positionJSON {
	return positionJSON{
		ID: p.ID, UserID: p.UserID, MarketID: p.MarketID, TokenType: p.Side.String(),
		Amount: p.Shares, AvgPrice: p.AvgPriceBps(), UseBonus: p.UseBonus, CreatedAt: ts(p.CreatedAt),
		EventID: p.EventID, EventName: p.EventName, PoolID: p.PoolID, PoolName: p.PoolName, MarketName: p.MarketName,
		Side: p.Side.String(), SideRu: sideRu(p.Side), UnrealizedPnL: p.UnrealizedPnL,
		CostKopecks: p.CostBasis, ValueKopecks: p.Value,
	}
}

// closedPositionJSON is a closed position (ClosedPositionWithDetails):
// amount is every share bought into it, pnl what it returned minus what it
// cost, won_side 1 (YES won), 0 (NO won), -1 (sold before resolution) or
// 2 (the market was voided).
type closedPositionJSON struct {
	ID         int64  `json:"id"`
	UserID     int64  `json:"user_id"`
	MarketID   int64  `json:"market_id"`
	TokenType  string `json:"token_type"`
	Amount     int64  `json:"amount"`
	AvgPrice   int64  `json:"avg_price"`
	UseBonus   bool   `json:"use_bonus"`
	EventID    int64  `json:"event_id"`
	EventName  string `json:"event_name"`
	PoolID     int64  `json:"pool_id"`
	PoolName   string `json:"pool_name"`
	MarketName string `json:"market_name"`
	Side       string `json:"side"`
	SideRu     string `json:"side_ru"`
	PnL        int64  `json:"pnl"`
	WonSide    int    `json:"won_side"`
	ClosedAt   string `json:"closed_at"`
	// SpentKopecks and ReturnedKopecks are what the position cost and
	// what it paid back.
	SpentKopecks    int64 `json:"spent_kopecks"`
	ReturnedKopecks int64 `json:"returned_kopecks"`
}

func closedPositionView(p *market.PositionDetail) closedPositionJSON {
	v := closedPositionJSON{
		ID: p.ID, UserID: p.UserID, MarketID: p.MarketID, TokenType: p.Side.String(),
		Amount: p.Bought, AvgPrice: p.AvgPriceBps(), UseBonus: p.UseBonus,
		EventID: p.EventID, EventName: p.EventName, PoolID: p.PoolID, PoolName: p.PoolName, MarketName: p.MarketName,
		Side: p.Side.String(), SideRu: sideRu(p.Side), PnL: p.PnL(), WonSide: -1,
		SpentKopecks: p.Spent, ReturnedKopecks: p.Returned,
	}
	if p.WonSide != nil {
		v.WonSide = *p.WonSide
	}
	if p.ClosedAt != nil {
		v.ClosedAt = ts(*p.ClosedAt)
	} else {
		v.ClosedAt = ts(p.UpdatedAt)
	}
	return v
}

func closedViews(ps []*market.PositionDetail) []closedPositionJSON {
	out := make([]closedPositionJSON, 0, len(ps))
	for _, p := range ps {
		out = append(out, closedPositionView(p))
	}
	return out
}

// profileJSON is the User profile of GET /auth/me.
type profileJSON struct {
	ID               int64   `json:"id"`
	Name             string  `json:"name"`
	Nickname         *string `json:"nickname"`
	ProfileHidden    bool    `json:"profile_hidden"`
	Email            string  `json:"email"`
	ReferralCode     string  `json:"referral_code"`
	Language         string  `json:"language"`
	Theme            string  `json:"theme"`
	Level            int     `json:"level"`
	Balance          int64   `json:"balance"`
	BonusBalance     int64   `json:"bonus_balance"`
	TotalBalance     int64   `json:"total_balance"`
	TronAddress      string  `json:"tron_address"`
	BscAddress       string  `json:"bsc_address"`
	PolygonAddress   string  `json:"polygon_address"`
	EthereumAddress  string  `json:"ethereum_address"`
	AvatarURL        *string `json:"avatar_url"`
	TelegramVerified bool    `json:"telegram_verified"`
	// TelegramNotifications: notifications go to the linked chat too.
	TelegramNotifications bool `json:"telegram_notifications"`
	IsCreator             bool `json:"is_creator"`
	IsStatsViewer         bool `json:"is_stats_viewer"`
	// MayCreateEvents: the user is a creator; MayProposeEvents: not one,
	// but proposals are on, each holding ProposalAnteKopecks.
	MayCreateEvents        bool                 `json:"may_create_events"`
	MayProposeEvents       bool                 `json:"may_propose_events"`
	ProposalAnteKopecks    int64                `json:"proposal_ante_kopecks"`
	Positions              []positionJSON       `json:"positions"`
	ClosedPositions        []closedPositionJSON `json:"closed_positions"`
	ClosedPositionsHasMore bool                 `json:"closed_positions_has_more"`
	TotalPredictions       int64                `json:"total_predictions"`
	BiggestWin             int64                `json:"biggest_win"`
	RegisteredDate         string               `json:"registered_date"`
}

func nonEmpty(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	v := *s
	return &v
}

func profileView(u *account.User, b account.Balances, open []market.OpenPosition, closed *market.ClosedPage, st market.Stats) profileJSON {
	v := profileJSON{
		ID: u.ID, Name: u.Name, Nickname: nonEmpty(u.Nickname), ProfileHidden: u.ProfileHidden, Email: u.Email,
		ReferralCode: u.ReferralCode, Language: u.Language, Theme: u.Theme, Level: u.Level,
		Balance: b.Balance, BonusBalance: b.Bonus, TotalBalance: b.Total(),
		TronAddress: u.TronAddress, BscAddress: u.BscAddress, PolygonAddress: u.PolygonAddress, EthereumAddress: u.EthereumAddress,
		AvatarURL: nonEmpty(u.AvatarURL), TelegramVerified: u.TelegramVerified, TelegramNotifications: u.TelegramNotifications, IsCreator: u.IsCreator, IsStatsViewer: u.IsStatsViewer,
		Positions:        make([]positionJSON, 0, len(open)),
		ClosedPositions:  []closedPositionJSON{},
		TotalPredictions: st.TotalPredictions, BiggestWin: st.BiggestWin,
		RegisteredDate: u.CreatedAt.UTC().Format(time.DateOnly),
	}
	for _, p := range open {
		v.Positions = append(v.Positions, positionView(p))
	}
	if closed != nil {
		v.ClosedPositions = closedViews(closed.Positions)
		v.ClosedPositionsHasMore = closed.HasMore
	}
	return v
}

// tradeJSON is the answer of a buy or a sell.
type tradeJSON struct {
	TradeID       int64      `json:"trade_id"`
	MarketID      int64      `json:"market_id"`
	Side          string     `json:"side"`
	Action        string     `json:"action"`
	Shares        int64      `json:"shares"`
	CostKopecks   *int64     `json:"cost_kopecks,omitempty"`
	PayoutKopecks *int64     `json:"payout_kopecks,omitempty"`
	FeeKopecks    int64      `json:"fee_kopecks"`
	AvgPriceBps   int64      `json:"avg_price_bps"`
	Balance       int64      `json:"balance"`
	BonusBalance  int64      `json:"bonus_balance"`
	TotalBalance  int64      `json:"total_balance"`
	CreatedAt     string     `json:"created_at"`
	Market        marketJSON `json:"market"`
}

func tradeView(r *market.Result) tradeJSON {
	t := r.Trade
	amount := t.Amount
	m := r.Market
	v := tradeJSON{
		TradeID: t.ID, MarketID: t.MarketID, Side: t.Side.String(), Action: string(t.Action), Shares: t.Shares,
		FeeKopecks: t.Fee, AvgPriceBps: t.AvgPriceBps(),
		Balance: r.Balances.Balance, BonusBalance: r.Balances.Bonus, TotalBalance: r.Balances.Total(),
		CreatedAt: ts(t.CreatedAt), Market: marketView(&m, t.CreatedAt),
	}
	if t.Action == market.ActionBuy {
		v.CostKopecks = &amount
	} else {
		v.PayoutKopecks = &amount
	}
	return v
}

// ownTradeJSON is one of the caller's own trades (GET /users/me/trades):
// the fields of a trade receipt and of the stream's trade event, without
// the balances and market of the moment. amount_kopecks is what changed
// hands, the fee included: the cost of a buy, the payout of a sell.
type ownTradeJSON struct {
	TradeID        int64   `json:"trade_id"`
	MarketID       int64   `json:"market_id"`
	Side           string  `json:"side"`
	Action         string  `json:"action"`
	Shares         int64   `json:"shares"`
	AmountKopecks  int64   `json:"amount_kopecks"`
	FeeKopecks     int64   `json:"fee_kopecks"`
	AvgPriceBps    int64   `json:"avg_price_bps"`
	PriceBefore    float64 `json:"price_before"`
	YesProbability float64 `json:"yes_probability"`
	UseBonus       bool    `json:"use_bonus"`
	CreatedAt      string  `json:"created_at"`
}

func ownTradeView(t *market.Trade) ownTradeJSON {
	return ownTradeJSON{TradeID: t.ID, MarketID: t.MarketID, Side: t.Side.String(), Action: string(t.Action),
		Shares: t.Shares, AmountKopecks: t.Amount, FeeKopecks: t.Fee, AvgPriceBps: t.AvgPriceBps(),
		PriceBefore: t.PriceBefore, YesProbability: t.PriceAfter, UseBonus: t.UseBonus, CreatedAt: ts(t.CreatedAt)}
}

// quoteJSON is a price quote.
type quoteJSON struct {
	MarketID      int64   `json:"market_id"`
	Side          string  `json:"side"`
	Action        string  `json:"action"`
	Shares        int64   `json:"shares"`
	CostKopecks   *int64  `json:"cost_kopecks,omitempty"`
	PayoutKopecks *int64  `json:"payout_kopecks,omitempty"`
	FeeKopecks    int64   `json:"fee_kopecks"`
	AvgPriceBps   int64   `json:"avg_price_bps"`
	PriceBefore   float64 `json:"price_before"`
	PriceAfter    float64 `json:"price_after"`
}

func quoteView(q *market.Quote) quoteJSON {
	amount := q.Amount
	v := quoteJSON{MarketID: q.MarketID, Side: q.Side.String(), Action: string(q.Action), Shares: q.Shares,
		FeeKopecks: q.Fee, AvgPriceBps: q.AvgPriceBps, PriceBefore: q.PriceBefore, PriceAfter: q.PriceAfter}
	if q.Action == market.ActionBuy {
		v.CostKopecks = &amount
	} else {
		v.PayoutKopecks = &amount
	}
	return v
}

// simpleTradeJSON is an item of the latest-trades feed: amount is what
// changed hands, kopecks.
type simpleTradeJSON struct {
	Amount int64   `json:"amount"`
	Name   string  `json:"name"`
	Token  string  `json:"token"`
	Event  string  `json:"event"`
	Market string  `json:"market"`
	Avatar *string `json:"avatar"`
	// Action (buy or sell) and CreatedAt are additions.
	Action    string `json:"action"`
	CreatedAt string `json:"created_at"`
}

func simpleTradeView(t *market.FeedTrade) simpleTradeJSON {
	return simpleTradeJSON{Amount: t.Amount, Name: t.TraderName, Token: t.Side.String(), Event: t.EventName,
		Market: t.MarketName, Avatar: nonEmpty(t.TraderAvatar), Action: string(t.Action), CreatedAt: ts(t.CreatedAt)}
}

type pnlPointJSON struct {
	Timestamp string  `json:"timestamp"`
	PnL       float64 `json:"pnl"`
}

type historyPointJSON struct {
	Timestamp      string  `json:"timestamp"`
	YesProbability float64 `json:"yes_probability"`
	QYes           int64   `json:"q_yes"`
	QNo            int64   `json:"q_no"`
}

// partnerSide is a side as the partner API writes it: "yes" or "no".
func partnerSide(s market.Side) string {
	if s == market.Yes {
		return "yes"
	}
	return "no"
}

// partnerBetJSON is the receipt of an accepted partner bet. It is built
// from the trade row alone, so a repeat gets the same bytes; the field
// order is fixed by the struct.
type partnerBetJSON struct {
	Status         string `json:"status"`
	ClientBetID    string `json:"client_bet_id"`
	ExternalUserID string `json:"external_user_id"`
	UserID         int64  `json:"user_id"`
	MarketID       int64  `json:"market_id"`
	// Side is the executed direction: buy_yes or buy_no.
	Side        string `json:"side"`
	CostKopecks int64  `json:"cost_kopecks"`
	SharesDelta int64  `json:"shares_delta"`
}

func partnerBetView(r *partner.Receipt) partnerBetJSON {
	return partnerBetJSON{Status: "accepted", ClientBetID: r.ClientBetID, ExternalUserID: r.ExternalUserID, UserID: r.UserID,
		MarketID: r.MarketID, Side: r.Direction, CostKopecks: r.CostKopecks, SharesDelta: r.SharesDelta}
}

// partnerSellJSON is the receipt of an accepted partner sell (POST
// /partner/sell); shares_delta is negative.
type partnerSellJSON struct {
	Status         string `json:"status"`
	ClientBetID    string `json:"client_bet_id"`
	ExternalUserID string `json:"external_user_id"`
	UserID         int64  `json:"user_id"`
	MarketID       int64  `json:"market_id"`
	// Side is the executed direction: sell_yes or sell_no.
	Side          string `json:"side"`
	PayoutKopecks int64  `json:"payout_kopecks"`
	SharesDelta   int64  `json:"shares_delta"`
}

func partnerSellView(r *partner.Receipt) partnerSellJSON {
	return partnerSellJSON{Status: "accepted", ClientBetID: r.ClientBetID, ExternalUserID: r.ExternalUserID, UserID: r.UserID,
		MarketID: r.MarketID, Side: r.Direction, PayoutKopecks: r.PayoutKopecks, SharesDelta: r.SharesDelta}
}

// partnerStateJSON is a partner user's sub-account (GET
// /partner/users/{external_user_id}).
type partnerStateJSON struct {
	ExternalUserID       string                `json:"external_user_id"`
	Exists               bool                  `json:"exists"`
	UserID               int64                 `json:"user_id"`
	BalanceKopecks       int64                 `json:"balance_kopecks"`
	OpenPositionsKopecks int64                 `json:"open_positions_kopecks"`
	Positions            []partnerPositionJSON `json:"positions"`
}

type partnerPositionJSON struct {
	MarketID     int64  `json:"market_id"`
	Side         string `json:"side"`
	Shares       int64  `json:"shares"`
	AvgPriceBps  int64  `json:"avg_price_bps"`
	ValueKopecks int64  `json:"value_kopecks"`
}

func partnerStateView(st *partner.State) partnerStateJSON {
	v := partnerStateJSON{ExternalUserID: st.ExternalUserID, Exists: st.Exists, UserID: st.UserID,
		BalanceKopecks: st.BalanceKopecks, OpenPositionsKopecks: st.OpenPositionsKopecks,
		Positions: make([]partnerPositionJSON, 0, len(st.Positions))}
	for _, p := range st.Positions {
		v.Positions = append(v.Positions, partnerPositionJSON{MarketID: p.MarketID, Side: partnerSide(p.Side), Shares: p.Shares,
			AvgPriceBps: p.AvgPriceBps, ValueKopecks: p.ValueKopecks})
	}
	return v
}

// partnerJSON is a partner as the operator sees it (never its key).
type partnerJSON struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	Disabled     bool   `json:"disabled"`
	FloatKopecks int64  `json:"float_kopecks"`
	CreatedAt    string `json:"created_at"`
}

func partnerView(p *partner.Partner, float int64) partnerJSON {
	return partnerJSON{ID: p.ID, Name: p.Name, Disabled: p.Disabled, FloatKopecks: float, CreatedAt: ts(p.CreatedAt)}
}

// newPartnerJSON is a partner just created, with its key: the only time
// the key is shown.
type newPartnerJSON struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Key  string `json:"key"`
}

// adminUserJSON is a user as the operator's search shows it: who the user
// is and their roles, never a password hash. PartnerID and ExternalID are
// set on a partner's sub-account.
type adminUserJSON struct {
	ID            int64   `json:"id"`
	Email         string  `json:"email"`
	Name          string  `json:"name"`
	Nickname      *string `json:"nickname"`
	IsCreator     bool    `json:"is_creator"`
	IsStatsViewer bool    `json:"is_stats_viewer"`
	PartnerID     *int64  `json:"partner_id"`
	ExternalID    *string `json:"external_id"`
	CreatedAt     string  `json:"created_at"`
}

// userPageJSON is a page of the operator's user search.
type userPageJSON struct {
	Users      []adminUserJSON `json:"users"`
	NextCursor *string         `json:"next_cursor"`
}

func userPageView(p *account.UserPage) userPageJSON {
	v := userPageJSON{Users: make([]adminUserJSON, 0, len(p.Users))}
	for _, u := range p.Users {
		a := adminUserJSON{ID: u.ID, Email: u.Email, Name: u.Name, Nickname: nonEmpty(u.Nickname),
			IsCreator: u.IsCreator, IsStatsViewer: u.IsStatsViewer, CreatedAt: ts(u.CreatedAt)}
		if u.PartnerID != 0 {
			pid, ext := u.PartnerID, u.ExternalID
			a.PartnerID, a.ExternalID = &pid, &ext
		}
		v.Users = append(v.Users, a)
	}
	if p.Next != "" {
		next := p.Next
		v.NextCursor = &next
	}
	return v
}

// partnerListedJSON is a partner in the operator's list (never its key).
type partnerListedJSON struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Disabled  bool   `json:"disabled"`
	CreatedAt string `json:"created_at"`
}

// partnerListJSON is the operator's list of partners.
type partnerListJSON struct {
	Partners []partnerListedJSON `json:"partners"`
}

func partnerListView(ps []*partner.Partner) partnerListJSON {
	out := make([]partnerListedJSON, 0, len(ps))
	for _, p := range ps {
		out = append(out, partnerListedJSON{ID: p.ID, Name: p.Name, Disabled: p.Disabled, CreatedAt: ts(p.CreatedAt)})
	}
	return partnerListJSON{Partners: out}
}
