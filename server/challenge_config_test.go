package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/server"
)

func TestChallengeSettings(t *testing.T) {
	t.Run("the defaults are no window (a close is final at once) and a bond of 10000 kopecks", func(t *testing.T) {
		c := server.DefaultConfig()
		if c.ResolutionChallenge != 0 || c.DisputeBondKopecks != 10_000 {
			t.Errorf("defaults: window %s, bond %d", c.ResolutionChallenge, c.DisputeBondKopecks)
		}
	})
	t.Run("the variables are read", func(t *testing.T) {
		t.Setenv("PREDICTKIT_RESOLUTION_CHALLENGE", "24h")
		t.Setenv("PREDICTKIT_DISPUTE_BOND_KOPECKS", "0")
		c, err := server.ConfigFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		if c.ResolutionChallenge != 24*time.Hour || c.DisputeBondKopecks != 0 {
			t.Errorf("read window %s, bond %d", c.ResolutionChallenge, c.DisputeBondKopecks)
		}
	})
	for _, c := range []struct{ env, value string }{
		{"PREDICTKIT_RESOLUTION_CHALLENGE", "-1s"},
		{"PREDICTKIT_RESOLUTION_CHALLENGE", "a day"},
		{"PREDICTKIT_RESOLUTION_CHALLENGE", "721h"},
		{"PREDICTKIT_DISPUTE_BOND_KOPECKS", "-1"},
		{"PREDICTKIT_DISPUTE_BOND_KOPECKS", "1000000000001"},
	} {
		t.Run(c.env+"="+c.value+" is refused by name", func(t *testing.T) {
			t.Setenv(c.env, c.value)
			if _, err := server.ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), c.env) {
				t.Fatalf("err = %v, want one naming %s", err, c.env)
			}
		})
	}
	t.Run("Validate refuses a negative window and bond", func(t *testing.T) {
		c := server.DefaultConfig()
		c.ResolutionChallenge, c.DisputeBondKopecks = -time.Second, -1
		err := c.Validate()
		for _, env := range []string{"PREDICTKIT_RESOLUTION_CHALLENGE", "PREDICTKIT_DISPUTE_BOND_KOPECKS"} {
			if err == nil || !strings.Contains(err.Error(), env) {
				t.Errorf("err = %v, want one naming %s", err, env)
			}
		}
	})
}
