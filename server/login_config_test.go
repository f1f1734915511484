package server_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/server"
)

func TestLoginFailuresPerAccountSetting(t *testing.T) {
	cases := []struct {
		name string
		vars map[string]string
		args []string
		want int    // the setting loaded, when err is ""
		err  string // in the error
	}{
		{"the default is 10", nil, nil, 10, ""},
		{"the variable sets it", map[string]string{"PREDICTKIT_LOGIN_FAILURES_PER_ACCOUNT": "25"}, nil, 25, ""},
		{"0 turns it off", map[string]string{"PREDICTKIT_LOGIN_FAILURES_PER_ACCOUNT": "0"}, nil, 0, ""},
		{"the flag wins over the variable", map[string]string{"PREDICTKIT_LOGIN_FAILURES_PER_ACCOUNT": "25"}, []string{"-login-failures-per-account=5"}, 5, ""},
		{"a negative number is refused", map[string]string{"PREDICTKIT_LOGIN_FAILURES_PER_ACCOUNT": "-1"}, nil, 0, "PREDICTKIT_LOGIN_FAILURES_PER_ACCOUNT (-login-failures-per-account)"},
		{"more than 100 is refused", nil, []string{"-login-failures-per-account=101"}, 0, "0 to 100"},
		{"a word is refused", map[string]string{"PREDICTKIT_LOGIN_FAILURES_PER_ACCOUNT": "ten"}, nil, 0, "PREDICTKIT_LOGIN_FAILURES_PER_ACCOUNT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := server.LoadConfig(c.args, env(c.vars), &bytes.Buffer{})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.LoginFailuresPerAccount != c.want {
				t.Fatalf("LoginFailuresPerAccount = %d, want %d", cfg.LoginFailuresPerAccount, c.want)
			}
		})
	}
	t.Run("Validate refuses a count set past the bound in code", func(t *testing.T) {
		c := server.DefaultConfig()
		c.LoginFailuresPerAccount = 1000
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "PREDICTKIT_LOGIN_FAILURES_PER_ACCOUNT") {
			t.Fatalf("Validate = %v", err)
		}
	})
}
