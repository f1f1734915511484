package server

import (
	"slices"
	"testing"

	"github.com/predictkit/predictkit/growth"
)

func TestGrowthDefaultsOfAConfigBuiltInCode(t *testing.T) {
	t.Run("a Config without growth rules gets every default", func(t *testing.T) {
		g := (Config{}).withDefaults().Growth
		d := growth.DefaultRules()
		if !slices.Equal(g.Levels, d.Levels) || g.QualifyKopecks != d.QualifyKopecks || g.RewardKopecks != d.RewardKopecks || g.SignupBonusKopecks != 0 {
			t.Fatalf("growth %+v, want %+v", g, d)
		}
		if err := (Config{}).Validate(); err != nil {
			t.Fatalf("Validate: %v", err)
		}
	})
	t.Run("a Config that sets some rules keeps them, a reward of 0 included", func(t *testing.T) {
		g := (Config{Growth: growth.Rules{SignupBonusKopecks: 50_000}}).withDefaults().Growth
		if g.RewardKopecks != 0 || g.SignupBonusKopecks != 50_000 || g.QualifyKopecks != growth.DefaultQualifyKopecks || len(g.Levels) != len(growth.DefaultLevels) {
			t.Fatalf("growth %+v", g)
		}
	})
	t.Run("levels that are set wrong are refused", func(t *testing.T) {
		if err := (Config{Growth: growth.Rules{Levels: []int64{5, 10}}}).Validate(); err == nil {
			t.Fatal("levels not starting at 0 were accepted")
		}
	})
}
