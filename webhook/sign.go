package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Headers of a delivery.
const (
	// HeaderSignature carries "t=<unix seconds>,v1=<hex HMAC-SHA256 of
	// secret over "<t>.<body>">".
	HeaderSignature = "Predictkit-Signature"
	// HeaderDelivery carries the delivery's id, the same at every
	// attempt, so that a receiver can drop a repeat.
	HeaderDelivery = "Predictkit-Delivery"
	// HeaderEvent carries the delivery's type.
	HeaderEvent = "Predictkit-Event"
)

// ErrSignature: a signature header that is malformed, does not match, or
// is older than the tolerance.
var ErrSignature = errors.New("webhook: invalid signature")

// Sign returns the Predictkit-Signature header of body sent at t.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret, ts string, body []byte) string {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// Verify checks header (a Predictkit-Signature) against body: a v1
// signature by secret over its t, with t no further than tolerance from
// now, so that a captured delivery cannot be replayed later. ErrSignature.
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts string
	var sigs []string
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return ErrSignature
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return ErrSignature
	}
	want := mac(secret, ts, body)
	for _, s := range sigs {
		if hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return ErrSignature
}
