package lmsr

import (
	"math"
	"slices"
	"testing"
)

// FuzzSplitOther drives SplitOther with arbitrary pools, claims and
// probabilities: nothing may panic, and a split that succeeds keeps its
// invariants: the new answer last, claims and q0 consistent, C lowered by
// less than a share, the escrow at least every outcome's claim, and every
// holding's payouts kept outcome by outcome.
func FuzzSplitOther(f *testing.F) {
	f.Add(int64(10000), int64(16628), int64(7855), int64(4960), int64(7465), int64(3800), int64(4960), uint8(2), 0.05)
	f.Add(int64(1), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), uint8(0), 0.3333333333333333)
	f.Add(int64(1e9), int64(1<<53), int64(1<<53-1), int64(0), int64(1<<53), int64(0), int64(1), uint8(1), 1e-300)
	f.Add(int64(100), int64(-500), int64(0), int64(500), int64(0), int64(0), int64(0), uint8(3), math.NaN())
	f.Fuzz(func(t *testing.T, b, q0, q1, q2, c0, c1, c2 int64, o uint8, pNew float64) {
		p := Exclusive{B: b, Q: []int64{q0, q1, q2}}
		claims := []int64{c0, c1, c2}
		other := int(o % 4) // 3 is out of range on purpose
		split, err := SplitOther(p, claims, other, pNew)
		if err != nil {
			if split.Pool.Q != nil {
				t.Fatalf("SplitOther returned %+v with %v", split, err)
			}
			return
		}
		q := split.Pool
		if q.N() != 4 || split.New != 3 || split.From[3] != other || !slices.Equal(q.Q[:3:3], slices.Replace(slices.Clone(p.Q), other, other+1, q.Q[other])) {
			t.Fatalf("split of %+v: %+v", p, split)
		}
		for k, c := range split.Claims {
			if c != claims[split.From[k]] || split.Q0[k] != q.Q[k]-c || c > split.Escrow {
				t.Fatalf("split of %+v with claims %v: %+v", p, claims, split)
			}
		}
		if drop := costDrop(p, q); !(drop >= -1e-6 && drop < 1+RoundingGuard*math.Abs(float64(min(q.Q[other], q.Q[3])-p.Q[other]))+1e-6) {
			t.Fatalf("split of %+v: C dropped by %v", p, drop)
		}
		for _, h := range []Holding{{other, Yes, 7}, {other, No, 7}, {(other + 1) % 3, No, 7}} {
			hs, err := split.MapHolding(h)
			if err != nil {
				t.Fatal(err)
			}
			for k := range 4 {
				var now int64
				for _, m := range hs {
					now += m.Payout(k)
				}
				if now != h.Payout(split.From[k]) {
					t.Fatalf("%+v maps to %+v: pays %d in outcome %d, paid %d", h, hs, now, k, h.Payout(split.From[k]))
				}
			}
		}
	})
}
