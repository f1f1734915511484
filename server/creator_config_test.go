package server_test

import (
	"strings"
	"testing"

	"github.com/predictkit/predictkit/server"
)

func TestCreatorSettings(t *testing.T) {
	t.Run("the defaults are 100 open events, no subsidy limit, and trading on one's own events", func(t *testing.T) {
		c := server.DefaultConfig()
		if c.CreatorMaxOpenEvents != 100 || c.CreatorMaxSubsidyKopecks != 0 || !c.CreatorsMayTradeOwn {
			t.Errorf("defaults: %d open events, %d kopecks, may trade own %v", c.CreatorMaxOpenEvents, c.CreatorMaxSubsidyKopecks, c.CreatorsMayTradeOwn)
		}
	})
	t.Run("the variables are read", func(t *testing.T) {
		t.Setenv("PREDICTKIT_CREATOR_MAX_OPEN_EVENTS", "0")
		t.Setenv("PREDICTKIT_CREATOR_MAX_SUBSIDY_KOPECKS", "5000000000000")
		t.Setenv("PREDICTKIT_CREATORS_MAY_TRADE_OWN", "false")
		c, err := server.ConfigFromEnv()
		if err != nil {
			t.Fatal(err)
		}
		if c.CreatorMaxOpenEvents != 0 || c.CreatorMaxSubsidyKopecks != 5_000_000_000_000 || c.CreatorsMayTradeOwn {
			t.Errorf("read %d open events, %d kopecks, may trade own %v", c.CreatorMaxOpenEvents, c.CreatorMaxSubsidyKopecks, c.CreatorsMayTradeOwn)
		}
	})
	for _, c := range []struct{ env, value string }{
		{"PREDICTKIT_CREATOR_MAX_OPEN_EVENTS", "-1"},
		{"PREDICTKIT_CREATOR_MAX_OPEN_EVENTS", "many"},
		{"PREDICTKIT_CREATOR_MAX_SUBSIDY_KOPECKS", "-5"},
		{"PREDICTKIT_CREATOR_MAX_SUBSIDY_KOPECKS", "9223372036854775807"},
		{"PREDICTKIT_CREATORS_MAY_TRADE_OWN", "sometimes"},
	} {
		t.Run(c.env+"="+c.value+" is refused by name", func(t *testing.T) {
			t.Setenv(c.env, c.value)
			if _, err := server.ConfigFromEnv(); err == nil || !strings.Contains(err.Error(), c.env) {
				t.Fatalf("err = %v, want one naming %s", err, c.env)
			}
		})
	}
	t.Run("Validate refuses negative limits", func(t *testing.T) {
		c := server.DefaultConfig()
		c.CreatorMaxOpenEvents, c.CreatorMaxSubsidyKopecks = -1, -1
		err := c.Validate()
		for _, env := range []string{"PREDICTKIT_CREATOR_MAX_OPEN_EVENTS", "PREDICTKIT_CREATOR_MAX_SUBSIDY_KOPECKS"} {
			if err == nil || !strings.Contains(err.Error(), env) {
				t.Errorf("err = %v, want one naming %s", err, env)
			}
		}
	})
}
