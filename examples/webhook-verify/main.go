// Command webhook-verify is a partner's receiver of predictkit webhooks:
// it checks each delivery's Predictkit-Signature with nothing but the
// standard library, drops repeats by Predictkit-Delivery (deliveries come
// at least once), and prints what it accepted.
//
//	WEBHOOK_SECRET=whsec_… go run ./examples/webhook-verify -addr :9000
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// verify reports whether header ("t=<unix seconds>,v1=<hex>") signs body
// with secret, at most tolerance away from now: the signature is
// HMAC-SHA256(secret, "<t>.<body>").
func verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) bool {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || now.Sub(time.Unix(sec, 0)).Abs() > tolerance {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "." + string(body)))
	want := hex.EncodeToString(mac.Sum(nil))
	return hmac.Equal([]byte(sig), []byte(want))
}

// receiver accepts signed deliveries, each id once.
type receiver struct {
	secret string
	out    io.Writer
	mu     sync.Mutex
	seen   map[string]bool
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil || !verify(rc.secret, r.Header.Get("Predictkit-Signature"), body, time.Now(), 5*time.Minute) {
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	id := r.Header.Get("Predictkit-Delivery")
	rc.mu.Lock()
	repeat := rc.seen[id]
	rc.seen[id] = true
	rc.mu.Unlock()
	if !repeat { // a repeat is answered 2xx too, or it is sent again
		fmt.Fprintf(rc.out, "delivery %s: %s\n", id, body)
	}
	w.WriteHeader(http.StatusNoContent)
}

func main() {
	addr := flag.String("addr", ":9000", "listen address")
	flag.Parse()
	secret := os.Getenv("WEBHOOK_SECRET")
	if secret == "" {
		log.Fatal("webhook-verify: set WEBHOOK_SECRET to the secret PUT /api/v1/admin/partners/{id}/webhook answered")
	}
	log.Fatal(http.ListenAndServe(*addr, &receiver{secret: secret, out: os.Stdout, seen: map[string]bool{}}))
}
