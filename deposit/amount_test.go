package deposit_test

import (
	"math/big"
	"testing"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/deposit"
)

func TestKopecks(t *testing.T) {
	big10 := func(s string) *big.Int { v, _ := new(big.Int).SetString(s, 10); return v }
	for _, tc := range []struct {
		name     string
		units    string
		decimals int
		rate     int64
		want     int64
		ok       bool
	}{
		{"whole tokens", "3000000", 6, 9000, 27000, true},
		{"a fraction of a token", "12500000", 6, 9000, 112500, true},
		{"rounds down to the kopeck", "1000001", 6, 9999, 9999, true},
		{"18 decimals", "1500000000000000000", 18, 10000, 15000, true},
		{"less than a kopeck is 0", "99", 6, 9000, 0, true},
		{"no decimals", "7", 0, 100, 700, true},
		{"at the most one credit may be", "1000000000000000", 6, 10000, account.MaxCredit, true},
		{"past the most one credit may be", "1000000000000100", 6, 10000, 0, false},
		{"a uint256 past int64", "115792089237316195423570985008687907853269984665640564039457584007913129639935", 6, 9000, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := deposit.Kopecks(big10(tc.units), tc.decimals, tc.rate)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("Kopecks(%s, %d, %d) = %d, %v; want %d, %v", tc.units, tc.decimals, tc.rate, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestTokenAmount(t *testing.T) {
	for _, tc := range []struct {
		units    string
		decimals int
		want     string
	}{
		{"12500000", 6, "12.5"},
		{"1", 6, "0.000001"},
		{"3000000", 6, "3"},
		{"0", 6, "0"},
		{"7", 0, "7"},
		{"1500000000000000000", 18, "1.5"},
		{"not a number", 6, "0"},
	} {
		t.Run(tc.units+" units of "+tc.want, func(t *testing.T) {
			if got := deposit.TokenAmount(tc.units, tc.decimals); got != tc.want {
				t.Fatalf("TokenAmount(%s, %d) = %q; want %q", tc.units, tc.decimals, got, tc.want)
			}
		})
	}
}
