package lmsr

import (
	"errors"
	"math"
	"testing"
)

func TestSide(t *testing.T) {
	tests := []struct {
		name     string
		side     Side
		str      string
		opposite Side
	}{
		{"yes prints as YES and opposes no", Yes, "YES", No},
		{"no prints as NO and opposes yes", No, "NO", Yes},
		{"an invalid side prints its number", Side(7), "Side(7)", Side(6)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.side.String(); got != tt.str {
				t.Errorf("String() = %q, want %q", got, tt.str)
			}
			if got := tt.side.Opposite(); got != tt.opposite {
				t.Errorf("Opposite() = %v, want %v", got, tt.opposite)
			}
		})
	}
}

func TestBinaryValues(t *testing.T) {
	ln2 := math.Ln2
	tests := []struct {
		name               string
		m                  Binary
		cost, pYes, wcLoss float64
	}{
		{"an even market costs b·ln 2 and prices both sides at 1/2",
			Binary{B: 100}, 100 * ln2, 0.5, 100 * ln2},
		{"shifting both quantities shifts the cost and keeps the prices",
			Binary{B: 100, QYes: 1e12, QNo: 1e12}, 1e12 + 100*ln2, 0.5, 100 * ln2},
		{"a YES lead of b·ln 3 prices YES at 3/4",
			Binary{B: 1000, QYes: 1000 * math.Log(3)}, 1000 * math.Log(4), 0.75, 1000 * math.Log(4)},
		{"a huge lead on a tiny b neither overflows nor loses the small price",
			Binary{B: 1, QYes: 0, QNo: 700}, 700 + math.Log1p(math.Exp(-700)), math.Exp(-700), 700 + math.Exp(-700)},
		{"a lead of 1e15 on b = 1 is priced 1 and 0 exactly",
			Binary{B: 1, QYes: 1e15}, 1e15, 1, 1e15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.m.Cost(); relErr(got, tt.cost) > 1e-14 {
				t.Errorf("Cost() = %v, want %v", got, tt.cost)
			}
			if got := tt.m.Price(Yes); relErr(got, tt.pYes) > 1e-13 {
				t.Errorf("Price(Yes) = %v, want %v", got, tt.pYes)
			}
			if got := tt.m.Price(No); math.Abs(got-(1-tt.pYes)) > 1e-15 {
				t.Errorf("Price(No) = %v, want %v", got, 1-tt.pYes)
			}
			if got := tt.m.WorstCaseLoss(); relErr(got, tt.wcLoss) > 1e-14 {
				t.Errorf("WorstCaseLoss() = %v, want %v", got, tt.wcLoss)
			}
		})
	}
}

func TestBinaryTrades(t *testing.T) {
	even := Binary{B: 100}
	tests := []struct {
		name    string
		m       Binary
		side    Side
		delta   float64
		buy     float64
		refund  float64
		buyErr  error
		sellErr error
	}{
		{"buying b·ln 3 YES at even odds costs b·ln 2 and selling as many refunds b·ln 1.5",
			even, Yes, 100 * math.Log(3), 100 * math.Log(2), 100 * math.Log(1.5), nil, nil},
		{"a zero trade costs and refunds nothing",
			even, No, 0, 0, 0, nil, nil},
		{"a buy that would push NO below 1e-6 is refused",
			even, Yes, 1400, 0, 0, ErrPriceLimit, ErrPriceLimit},
		{"a negative size is an invalid quantity",
			even, Yes, -1, 0, 0, ErrInvalidQuantity, ErrInvalidQuantity},
		{"a NaN size is an invalid quantity",
			even, No, math.NaN(), 0, 0, ErrInvalidQuantity, ErrInvalidQuantity},
		{"a size above 2^53 is an invalid quantity",
			even, No, 1 << 54, 0, 0, ErrInvalidQuantity, ErrInvalidQuantity},
		{"an invalid side is refused",
			even, Side(2), 1, 0, 0, ErrInvalidSide, ErrInvalidSide},
		{"a zero b is an invalid liquidity",
			Binary{}, Yes, 1, 0, 0, ErrInvalidLiquidity, ErrInvalidLiquidity},
		{"an infinite quantity is invalid",
			Binary{B: 1, QNo: math.Inf(1)}, Yes, 1, 0, 0, ErrInvalidQuantity, ErrInvalidQuantity},
		{"a MinPrice of 1/2 is an invalid probability",
			Binary{B: 1, MinPrice: 0.5}, Yes, 1, 0, 0, ErrInvalidProbability, ErrInvalidProbability},
		{"a wider MinPrice refuses trades the default allows",
			Binary{B: 100, MinPrice: 0.1}, Yes, 300, 0, 0, ErrPriceLimit, ErrPriceLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buy, err := tt.m.BuyCost(tt.side, tt.delta)
			if !errors.Is(err, tt.buyErr) {
				t.Fatalf("BuyCost error = %v, want %v", err, tt.buyErr)
			}
			if err == nil && relErr(buy, tt.buy) > 1e-13 {
				t.Errorf("BuyCost = %v, want %v", buy, tt.buy)
			}
			if err == nil {
				after := tt.m.With(tt.side, tt.delta)
				// Selling what was just bought refunds exactly its cost.
				refund, err := after.SellRefund(tt.side, tt.delta)
				if err != nil || relErr(refund, buy) > 1e-13 {
					t.Errorf("SellRefund after the buy = %v, %v; want %v", refund, err, buy)
				}
			}
			refund, err := tt.m.SellRefund(tt.side, tt.delta)
			if !errors.Is(err, tt.sellErr) {
				t.Fatalf("SellRefund error = %v, want %v", err, tt.sellErr)
			}
			if err == nil && relErr(refund, tt.refund) > 1e-13 {
				t.Errorf("SellRefund = %v, want %v", refund, tt.refund)
			}
		})
	}
}

func TestBinarySharesForSpend(t *testing.T) {
	tests := []struct {
		name  string
		m     Binary
		side  Side
		spend float64
		want  float64
		err   error
	}{
		{"spending b·ln 2 on YES from even buys b·ln 3",
			Binary{B: 100}, Yes, 100 * math.Ln2, 100 * math.Log(3), nil},
		{"spending nothing buys nothing", Binary{B: 100}, No, 0, 0, nil},
		{"a spend far beyond b takes the large-M/b branch",
			Binary{B: 1, MinPrice: 1e-300}, Yes, 600, 600 + math.Log(2), nil},
		{"a spend that would push the price past the limit is refused",
			Binary{B: 100}, Yes, 1500, 0, ErrPriceLimit},
		{"a negative spend is an invalid quantity",
			Binary{B: 100}, Yes, -5, 0, ErrInvalidQuantity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.m.SharesForSpend(tt.side, tt.spend)
			if !errors.Is(err, tt.err) {
				t.Fatalf("error = %v, want %v", err, tt.err)
			}
			if err == nil && relErr(got, tt.want) > 1e-13 {
				t.Errorf("SharesForSpend = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestInitialQ(t *testing.T) {
	tests := []struct {
		name      string
		b         int64
		p         float64
		qYes, qNo int64
		err       error
	}{
		{"an even market starts at zero", 10000, 0.5, 0, 0, nil},
		{"70% YES puts round(b·ln(7/3)) on YES", 10000, 0.7, 8473, 0, nil},
		{"30% YES puts the same on NO", 10000, 0.3, 0, 8473, nil},
		{"a probability of 1 is refused", 10000, 1, 0, 0, ErrInvalidProbability},
		{"a NaN probability is refused", 10000, math.NaN(), 0, 0, ErrInvalidProbability},
		{"a zero b is refused", 0, 0.5, 0, 0, ErrInvalidLiquidity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			qy, qn, err := InitialQ(tt.b, tt.p)
			if !errors.Is(err, tt.err) {
				t.Fatalf("error = %v, want %v", err, tt.err)
			}
			if qy != tt.qYes || qn != tt.qNo {
				t.Errorf("InitialQ = (%d, %d), want (%d, %d)", qy, qn, tt.qYes, tt.qNo)
			}
		})
	}
}

func TestBinaryMethodsNeverMutate(t *testing.T) {
	m := Binary{B: 100, QYes: 5, QNo: 7}
	orig := m
	_ = m.With(Yes, 10)
	_, _ = m.BuyCost(Yes, 10)
	_, _ = m.SellRefund(No, 3)
	_, _ = BuyForSpend(m, Yes, 1000, 0.03)
	if m != orig {
		t.Fatalf("state changed from %+v to %+v", orig, m)
	}
}

func TestInvalidStatesNeverYieldNaN(t *testing.T) {
	bad := []Binary{
		{}, {B: math.NaN()}, {B: math.Inf(1)}, {B: -1},
		{B: 1, QYes: math.NaN()}, {B: 1, QNo: math.Inf(-1)}, {B: 1, MinPrice: -1},
	}
	for _, m := range bad {
		for _, v := range []float64{m.Cost(), m.Price(Yes), m.Price(No), m.WorstCaseLoss()} {
			if v != 0 {
				t.Errorf("%+v gave %v, want 0 for an invalid state", m, v)
			}
		}
		if m.Validate() == nil {
			t.Errorf("%+v validated", m)
		}
	}
}
