package postgres

import (
	"time"

	"github.com/predictkit/predictkit/market"
)

// tradeColumns are the columns of trades, in the order tradeDest scans
// them and tradeArgs (all but id) builds their arrays. A trade never
// changes once written.
var tradeColumns = []column{
	{name: "id", typ: "bigint"},
	{name: "market_id", typ: "bigint"},
	{name: "user_id", typ: "bigint"},
	{name: "side", typ: "smallint"},
	{name: "action", typ: "text"},
	{name: "shares", typ: "bigint"},
	{name: "amount", typ: "bigint"},
	{name: "cost", typ: "bigint"},
	{name: "fee", typ: "bigint"},
	{name: "price_before", typ: "float8"},
	{name: "price_after", typ: "float8"},
	{name: "q_yes", typ: "bigint"},
	{name: "q_no", typ: "bigint"},
	{name: "use_bonus", typ: "boolean"},
	{name: "partner_id", typ: "bigint", null: "0"},
	{name: "client_bet_id", typ: "text", null: "''"},
	{name: "request_hash", typ: "text"},
	{name: "created_at", typ: "timestamptz"},
}

var (
	// tradeCols is the SELECT list of trades t, for tradeDest.
	tradeCols = selectList("t", tradeColumns)
	// newTradeColumns are the columns written for a new trade: all but
	// id, which comes from the sequence.
	newTradeColumns = tradeColumns[1:]
)

// insertTrades is the part of sqlInsertEffects that inserts the new
// trades, from the arrays of tradeArgs in parameters $first on, with the
// ids of t_ids.
func insertTrades(first int) string {
	return `INSERT INTO trades (id, ` + nameList(newTradeColumns) + `)
	SELECT i.id, ` + valueList("u", newTradeColumns) + `
	FROM ` + unnest(first, newTradeColumns) + `
		WITH ORDINALITY AS u(` + nameList(newTradeColumns) + `, ord)
	JOIN t_ids i ON i.ord = u.ord
	ORDER BY u.ord`
}

// tradeDest returns the scan destinations of tradeCols into t, and a
// function that finishes t once the row is scanned.
func tradeDest(t *market.Trade) ([]any, func()) {
	var side int16
	var action string
	dest := []any{&t.ID, &t.MarketID, &t.UserID, &side, &action, &t.Shares, &t.Amount, &t.Cost, &t.Fee,
		&t.PriceBefore, &t.PriceAfter, &t.QYes, &t.QNo, &t.UseBonus, &t.PartnerID, &t.ClientBetID, &t.RequestHash, &t.CreatedAt}
	return dest, func() {
		t.Side, t.Action = sideOf(side), market.Action(action)
	}
}

// tradeArgs returns the arrays of newTradeColumns for the trades of tes.
func tradeArgs(tes []*market.TradeEffect) []any {
	n := len(tes)
	mkt, user, shares, amount, cost, fee, qYes, qNo, partner := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	side := make([]int16, n)
	action, clientBet, hash := make([]string, n), make([]string, n), make([]string, n)
	before, after := make([]float64, n), make([]float64, n)
	bonus := make([]bool, n)
	created := make([]time.Time, n)
	for i, te := range tes {
		t := te.Trade
		mkt[i], user[i], shares[i], amount[i], cost[i], fee[i], qYes[i], qNo[i], partner[i] = t.MarketID, t.UserID, t.Shares, t.Amount, t.Cost, t.Fee, t.QYes, t.QNo, t.PartnerID
		side[i], action[i], clientBet[i], hash[i] = sideCode(t.Side), string(t.Action), t.ClientBetID, t.RequestHash
		before[i], after[i], bonus[i], created[i] = t.PriceBefore, t.PriceAfter, t.UseBonus, dbTime(t.CreatedAt)
	}
	return []any{mkt, user, side, action, shares, amount, cost, fee, before, after, qYes, qNo, bonus, partner, clientBet, hash, created}
}
