package webhook_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/webhook"
)

func TestVerify(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id":1,"type":"market.resolved","created_at":"2027-01-15T08:00:00Z","data":{}}`)
	header := webhook.Sign("whsec_test", at, body)
	if !strings.HasPrefix(header, "t=1800000000,v1=") || len(header) != len("t=1800000000,v1=")+64 {
		t.Fatalf("header %q", header)
	}
	for _, tc := range []struct {
		name   string
		secret string
		header string
		body   string
		now    time.Time
		ok     bool
	}{
		{"the signed body verifies", "whsec_test", header, string(body), at, true},
		{"within the tolerance it verifies", "whsec_test", header, string(body), at.Add(4 * time.Minute), true},
		{"an old signature is refused", "whsec_test", header, string(body), at.Add(6 * time.Minute), false},
		{"another secret is refused", "whsec_other", header, string(body), at, false},
		{"a changed body is refused", "whsec_test", header, string(body) + " ", at, false},
		{"a changed time is refused", "whsec_test", strings.Replace(header, "t=1800000000", "t=1800000001", 1), string(body), at, false},
		{"a header without v1 is refused", "whsec_test", "t=1800000000", string(body), at, false},
		{"garbage is refused", "whsec_test", "nonsense", string(body), at, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := webhook.Verify(tc.secret, tc.header, []byte(tc.body), tc.now, 5*time.Minute)
			if tc.ok != (err == nil) || err != nil && !errors.Is(err, webhook.ErrSignature) {
				t.Fatalf("got %v", err)
			}
		})
	}
}
