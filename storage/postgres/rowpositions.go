package postgres

import (
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/market"
)

// positionColumns are the columns of positions, in the order positionDest
// scans them and newPositionArgs (all but id) and updatePositionArgs (id
// and the mutable ones) build their arrays.
var positionColumns = []column{
	{name: "id", typ: "bigint"},
	{name: "user_id", typ: "bigint"},
	{name: "market_id", typ: "bigint"},
	{name: "side", typ: "smallint"},
	{name: "shares", typ: "bigint", mutable: true},
	{name: "cost_basis", typ: "bigint", mutable: true},
	{name: "bought", typ: "bigint", mutable: true},
	{name: "spent", typ: "bigint", mutable: true},
	{name: "returned", typ: "bigint", mutable: true},
	{name: "use_bonus", typ: "boolean", mutable: true},
	{name: "bonus_shares", typ: "bigint", mutable: true},
	{name: "bonus_net", typ: "bigint", mutable: true},
	{name: "partner_id", typ: "bigint", null: "0"},
	{name: "created_at", typ: "timestamptz"},
	{name: "updated_at", typ: "timestamptz", mutable: true},
	{name: "closed_at", typ: "timestamptz", mutable: true},
	{name: "won_side", typ: "smallint", mutable: true},
}

var (
	// positionCols is the SELECT list of positions x, for positionDest.
	positionCols = selectList("x", positionColumns)
	// newPositionColumns are the columns written for a new position:
	// all but id, which comes from the sequence.
	newPositionColumns = positionColumns[1:]
	// changedPositionColumns are the columns written for a changed
	// position: its id, then those that change.
	changedPositionColumns = slices.Concat(positionColumns[:1], onlyMutable(positionColumns))
)

// insertPositions is the part of sqlInsertEffects that inserts the new
// positions, from the arrays of newPositionArgs in parameters $first on,
// with the ids of p_ids.
func insertPositions(first int) string {
	return `INSERT INTO positions (id, ` + nameList(newPositionColumns) + `)
	SELECT i.id, ` + valueList("u", newPositionColumns) + `
	FROM ` + unnest(first, newPositionColumns) + `
		WITH ORDINALITY AS u(` + nameList(newPositionColumns) + `, ord)
	JOIN p_ids i ON i.ord = u.ord
	ORDER BY u.ord`
}

// sqlUpdatePositions writes changed positions by id, from the arrays of
// updatePositionArgs. The redundant x.id = ANY($1) lets the planner find
// them through the primary key: a settlement chunk of thousands of rows
// would otherwise hash-join the array against a sequential scan of the
// whole table.
var sqlUpdatePositions = `UPDATE positions x SET ` + setList("u", changedPositionColumns[1:]) + `
FROM ` + unnest(1, changedPositionColumns) + `
	AS u(` + nameList(changedPositionColumns) + `)
WHERE x.id = u.id AND x.id = ANY($1)`

// positionDest returns the scan destinations of positionCols into p, and
// a function that finishes p once the row is scanned.
func positionDest(p *market.Position) ([]any, func()) {
	var side int16
	var won *int16
	dest := []any{&p.ID, &p.UserID, &p.MarketID, &side, &p.Shares, &p.CostBasis, &p.Bought, &p.Spent,
		&p.Returned, &p.UseBonus, &p.BonusShares, &p.BonusNet, &p.PartnerID, &p.CreatedAt, &p.UpdatedAt, &p.ClosedAt, &won}
	return dest, func() {
		p.Side = sideOf(side)
		if won != nil {
			w := int(*won)
			p.WonSide = &w
		}
	}
}

func scanPositions(rows pgx.Rows) ([]*market.Position, error) {
	var ps []*market.Position
	for rows.Next() {
		p := &market.Position{}
		dest, finish := positionDest(p)
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return nil, err
		}
		finish()
		ps = append(ps, p)
	}
	return ps, rows.Err()
}

// newPositionArgs returns the arrays of newPositionColumns for ps.
func newPositionArgs(ps []*market.Position) []any {
	n := len(ps)
	user, mkt, shares, basis, bought, spent, returned, partner := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	bonusShares, bonusNet := make([]int64, n), make([]int64, n)
	side := make([]int16, n)
	bonus := make([]bool, n)
	created, updated := make([]time.Time, n), make([]time.Time, n)
	closed := make([]*time.Time, n)
	won := make([]*int16, n)
	for i, p := range ps {
		user[i], mkt[i], shares[i], basis[i], bought[i], spent[i], returned[i], partner[i] = p.UserID, p.MarketID, p.Shares, p.CostBasis, p.Bought, p.Spent, p.Returned, p.PartnerID
		side[i], bonus[i], bonusShares[i], bonusNet[i] = sideCode(p.Side), p.UseBonus, p.BonusShares, p.BonusNet
		created[i], updated[i], closed[i], won[i] = dbTime(p.CreatedAt), dbTime(p.UpdatedAt), timePtr(p.ClosedAt), wonCode(p.WonSide)
	}
	return []any{user, mkt, side, shares, basis, bought, spent, returned, bonus, bonusShares, bonusNet, partner, created, updated, closed, won}
}

// updatePositionArgs returns the arrays of changedPositionColumns for the
// positions of byID, in order.
func updatePositionArgs(order []int64, byID map[int64]*market.Position) []any {
	n := len(order)
	id, shares, basis, bought, spent, returned := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	bonusShares, bonusNet := make([]int64, n), make([]int64, n)
	bonus := make([]bool, n)
	updated := make([]time.Time, n)
	closed := make([]*time.Time, n)
	won := make([]*int16, n)
	for i, pid := range order {
		p := byID[pid]
		id[i], shares[i], basis[i], bought[i], spent[i], returned[i] = p.ID, p.Shares, p.CostBasis, p.Bought, p.Spent, p.Returned
		bonus[i], bonusShares[i], bonusNet[i] = p.UseBonus, p.BonusShares, p.BonusNet
		updated[i], closed[i], won[i] = dbTime(p.UpdatedAt), timePtr(p.ClosedAt), wonCode(p.WonSide)
	}
	return []any{id, shares, basis, bought, spent, returned, bonus, bonusShares, bonusNet, updated, closed, won}
}

// wonCode is a position's won side as the database keeps it.
func wonCode(w *int) *int16 {
	if w == nil {
		return nil
	}
	c := int16(*w)
	return &c
}
