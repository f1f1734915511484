package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/server"
)

// BenchmarkPasswordResetRequest compares the answer time of a reset
// request for a registered e-mail with one for an e-mail no account has:
// the look-up happens after the answer, so the two should not differ
// beyond noise. Timings are for reading only; no test asserts them.
func BenchmarkPasswordResetRequest(b *testing.B) {
	cfg := testConfig(memoryStore())
	cfg.RatePasswordReset, cfg.RatePasswordResetEmail = server.Rate{}, server.Rate{}
	app, err := server.Build(cfg)
	if err != nil {
		b.Fatal(err)
	}
	reg := httptest.NewRequest(http.MethodPost, "/api/v1/auth/register", strings.NewReader(`{"email":"known@test.predictkit","password":"password-known","name":"K"}`))
	reg.Header.Set("Content-Type", "application/json")
	if res, err := app.Test(reg, -1); err != nil || res.StatusCode != http.StatusCreated {
		b.Fatalf("register: %v %v", res, err)
	}
	for _, c := range []struct{ name, email string }{{"a registered e-mail", "known@test.predictkit"}, {"an e-mail with no account", "unknown@test.predictkit"}} {
		b.Run(c.name, func(b *testing.B) {
			body := `{"email":"` + c.email + `"}`
			busy := 0
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "/api/v1/auth/password/reset-request", strings.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				res, err := app.Test(r, -1)
				if err != nil {
					b.Fatal(err)
				}
				switch res.StatusCode {
				case http.StatusAccepted:
				case http.StatusServiceUnavailable:
					busy++ // the queue filled faster than its workers drain it
				default:
					b.Fatalf("answered %d", res.StatusCode)
				}
				res.Body.Close()
			}
			b.ReportMetric(float64(busy)/float64(b.N), "busy/op")
		})
	}
}
