package sim

import (
	"errors"
	"fmt"

	"github.com/predictkit/predictkit/lmsr"
)

// ErrNoSide reports a NO trade on a design that has no NO side (LS).
var ErrNoSide = errors.New("sim: the design has no NO side")

// Trade is one priced trade: a buy of shares of Side on market (outcome)
// Outcome, or a sale. For a buy Cost is the LMSR cost rounded up, Fee the
// platform's fee and Cash = Cost + Fee what the buyer pays; for a sale Cost
// is the LMSR refund rounded down, Fee the fee and Cash = Cost − Fee what
// the seller receives. Budget is what the buyer offered (0 for a sale, and
// for a quote of a number of shares). Step is the step of the run it was
// made in (from 1) and Trader the index of the trader who made it.
type Trade struct {
	Step, Trader int
	Outcome      int
	Side         lmsr.Side
	Sell         bool
	Budget       int64
	Shares       int64
	Cost, Fee    int64
	Cash         int64
}

// Design is a market maker for N outcomes of which exactly one wins, priced
// in integer shares and kopecks. Quotes do not change the state; Apply
// executes a quote made on the current state.
type Design interface {
	Kind() Kind
	N() int
	// HasNo reports whether the design sells NO on a market.
	HasNo() bool
	// PricesInto writes the YES price of every outcome into dst[:N()].
	PricesInto(dst []float64) error
	// Liquidity is the current b of market i, for traders' estimates.
	Liquidity(i int) float64
	// QuoteBuy prices the buy of side s of market i with the most shares
	// whose cash, fee included, fits in budget.
	QuoteBuy(i int, s lmsr.Side, budget int64) (Trade, error)
	// QuoteShares prices a buy of exactly shares shares.
	QuoteShares(i int, s lmsr.Side, shares int64) (Trade, error)
	// QuoteSell prices a sale of shares of side s of market i.
	QuoteSell(i int, s lmsr.Side, shares int64) (Trade, error)
	// Apply executes a quoted trade.
	Apply(t Trade)
	// Collected is the maker's money beyond the subsidy: costs taken less
	// refunds paid, kopecks.
	Collected() int64
	// Fees is the fees collected, kopecks.
	Fees() int64
	// Subsidy is what the platform escrows at the opening, kopecks.
	Subsidy() int64
	// Payout is what the maker owes the traders if outcome w wins.
	Payout(w int) int64
}

// NewDesign opens the design c.Design for c.Outcomes outcomes at 1/N each.
func NewDesign(c Config) (Design, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	switch c.Design {
	case Binary:
		return newBinaries(c.B, c.Outcomes, c.Margin)
	case Pool:
		return newPool(c.B, c.Outcomes, c.Margin)
	default:
		return newLS(c.B, c.Outcomes, c.Margin, c.LSCommission)
	}
}

// ledger is the money every design keeps the same way.
type ledger struct {
	margin    float64
	subsidy   int64
	collected int64
	fees      int64
}

func (l *ledger) Collected() int64 { return l.collected }
func (l *ledger) Fees() int64      { return l.fees }
func (l *ledger) Subsidy() int64   { return l.subsidy }

func (l *ledger) book(t Trade) {
	if t.Sell {
		l.collected -= t.Cost
	} else {
		l.collected += t.Cost
	}
	l.fees += t.Fee
}

func buyTrade(i int, s lmsr.Side, budget int64, b lmsr.Buy) Trade {
	return Trade{Outcome: i, Side: s, Budget: budget, Shares: b.Shares, Cost: b.Cost, Fee: b.Fee, Cash: b.Charge}
}

func sellTrade(i int, s lmsr.Side, q lmsr.Sell) Trade {
	return Trade{Outcome: i, Side: s, Sell: true, Shares: q.Shares, Cost: q.Refund, Fee: q.Fee, Cash: q.Payout}
}

// binaries is N independent binary markets, market i on outcome i: what a
// non-exclusive pool of the platform is. Market i pays its YES holders if
// outcome i wins and its NO holders otherwise.
type binaries struct {
	ledger
	b         int64
	qYes, qNo []int64
	yes0, no0 int64 // every market's opening quantities
}

func newBinaries(b int64, n int, margin float64) (*binaries, error) {
	qy, qn, err := lmsr.InitialQ(b, 1/float64(n))
	if err != nil {
		return nil, err
	}
	d := &binaries{ledger: ledger{margin: margin}, b: b, qYes: make([]int64, n), qNo: make([]int64, n), yes0: qy, no0: qn}
	for i := range n {
		d.qYes[i], d.qNo[i] = qy, qn
	}
	sub, err := lmsr.SubsidyKopecks(d.market(0))
	if err != nil {
		return nil, err
	}
	d.subsidy = int64(n) * sub
	return d, nil
}

func (d *binaries) Kind() Kind  { return Binary }
func (d *binaries) N() int      { return len(d.qYes) }
func (d *binaries) HasNo() bool { return true }

// market is market i as the server's Market.Pricer sees it.
func (d *binaries) market(i int) lmsr.Binary {
	return lmsr.Binary{B: float64(d.b), QYes: float64(d.qYes[i]), QNo: float64(d.qNo[i])}
}

func (d *binaries) PricesInto(dst []float64) error {
	if len(dst) < len(d.qYes) {
		return fmt.Errorf("%w: dst holds %d prices, design has %d", lmsr.ErrDimension, len(dst), len(d.qYes))
	}
	for i := range d.qYes {
		m := d.market(i)
		if err := m.Validate(); err != nil {
			return err
		}
		dst[i] = m.Price(lmsr.Yes)
	}
	return nil
}

func (d *binaries) Liquidity(int) float64 { return float64(d.b) }

func (d *binaries) QuoteBuy(i int, s lmsr.Side, budget int64) (Trade, error) {
	b, err := lmsr.BuyForSpend(d.market(i), s, budget, d.margin)
	return buyTrade(i, s, budget, b), err
}

func (d *binaries) QuoteShares(i int, s lmsr.Side, shares int64) (Trade, error) {
	b, err := lmsr.BuyShares(d.market(i), s, shares, d.margin)
	return buyTrade(i, s, 0, b), err
}

func (d *binaries) QuoteSell(i int, s lmsr.Side, shares int64) (Trade, error) {
	q, err := lmsr.SellShares(d.market(i), s, shares, d.margin)
	return sellTrade(i, s, q), err
}

func (d *binaries) Apply(t Trade) {
	delta := signed(t)
	if t.Side == lmsr.Yes {
		d.qYes[t.Outcome] += delta
	} else {
		d.qNo[t.Outcome] += delta
	}
	d.book(t)
}

func (d *binaries) Payout(w int) int64 {
	var p int64
	for i := range d.qYes {
		if i == w {
			p += d.qYes[i] - d.yes0
		} else {
			p += d.qNo[i] - d.no0
		}
	}
	return p
}

func signed(t Trade) int64 {
	if t.Sell {
		return -t.Shares
	}
	return t.Shares
}

// pool is one exclusive pool: lmsr.Exclusive, as the server prices it.
type pool struct {
	ledger
	ex lmsr.Exclusive
	q0 []int64
}

func newPool(b int64, n int, margin float64) (*pool, error) {
	probs := make([]float64, n)
	for i := range probs {
		probs[i] = 1 / float64(n)
	}
	ex, err := lmsr.NewExclusive(b, probs)
	if err != nil {
		return nil, err
	}
	sub, err := ex.SubsidyKopecks()
	if err != nil {
		return nil, err
	}
	return &pool{ledger: ledger{margin: margin, subsidy: sub}, ex: ex, q0: append([]int64(nil), ex.Q...)}, nil
}

func (d *pool) Kind() Kind  { return Pool }
func (d *pool) N() int      { return d.ex.N() }
func (d *pool) HasNo() bool { return true }

func (d *pool) PricesInto(dst []float64) error { return d.ex.PricesInto(dst) }

func (d *pool) Liquidity(int) float64 { return float64(d.ex.B) }

func (d *pool) QuoteBuy(i int, s lmsr.Side, budget int64) (Trade, error) {
	b, err := d.ex.BuyForSpend(i, s, budget, d.margin)
	return buyTrade(i, s, budget, b), err
}

func (d *pool) QuoteShares(i int, s lmsr.Side, shares int64) (Trade, error) {
	b, err := d.ex.BuyShares(i, s, shares, d.margin)
	return buyTrade(i, s, 0, b), err
}

func (d *pool) QuoteSell(i int, s lmsr.Side, shares int64) (Trade, error) {
	q, err := d.ex.SellShares(i, s, shares, d.margin)
	return sellTrade(i, s, q), err
}

// Apply moves the quantities in place, as Exclusive.With does on a copy.
func (d *pool) Apply(t Trade) {
	delta := signed(t)
	if t.Side == lmsr.Yes {
		d.ex.Q[t.Outcome] += delta
	} else {
		for j := range d.ex.Q {
			if j != t.Outcome {
				d.ex.Q[j] += delta
			}
		}
	}
	d.book(t)
}

func (d *pool) Payout(w int) int64 { return d.ex.Q[w] - d.q0[w] }
