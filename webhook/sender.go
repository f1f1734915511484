package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Defaults of a Sender.
const (
	// DefaultWindow is how long a delivery is retried before it is
	// marked failed.
	DefaultWindow = 24 * time.Hour
	// DefaultTimeout bounds one attempt, from dialling to the answer's
	// status.
	DefaultTimeout = 10 * time.Second
	// DefaultPerPartner is how many deliveries of one partner are sent at
	// the same time, at most, by one Sender.
	DefaultPerPartner = 4
)

// Sender sends the due deliveries of its store, and first queues those
// of new change-log entries (Store.DispatchWebhooks). Several Senders,
// in several processes, may serve one store: each claims what it sends.
// Set its fields before Run.
type Sender struct {
	store  Store
	client *http.Client

	// Now is the clock (tests replace it).
	Now func() time.Time
	// PerPartner bounds the deliveries of one partner in flight; the
	// partners do not share workers, so a slow endpoint delays only its
	// own partner's deliveries.
	PerPartner int
	// Timeout bounds one attempt; Lease is how long a claim holds a
	// delivery (after which another Sender may send it again: a Sender
	// that died mid-attempt loses nothing). Lease must exceed Timeout.
	Timeout, Lease time.Duration
	// Window is how long a delivery is retried; BaseDelay and MaxDelay
	// shape the backoff: the n-th retry waits a random time in
	// [0, min(MaxDelay, BaseDelay·2^(n-1))) (full jitter).
	Window, BaseDelay, MaxDelay time.Duration
	// Poll is how often the store is asked for new work when nothing
	// wakes the Sender.
	Poll time.Duration
	// Log receives the failures of the store (never a secret).
	Log *slog.Logger
	// Observe, when set, is told of every attempt: its outcome
	// (Delivered, Pending for a retry to come, Failed) and how long it
	// took.
	Observe func(outcome string, took time.Duration)

	wake chan struct{}
	mu   sync.Mutex
	busy map[int64]int
	wg   sync.WaitGroup
}

// NewSender returns a Sender over store that connects through guard:
// every address it dials is checked (Guard.DialContext), no proxy is
// used (a proxy would dial for it, unchecked) and redirects are not
// followed (a 3xx is a failed attempt).
func NewSender(store Store, guard *Guard) *Sender {
	tr := &http.Transport{
		DialContext:           guard.DialContext,
		Proxy:                 nil,
		MaxIdleConnsPerHost:   DefaultPerPartner,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   DefaultTimeout,
		ResponseHeaderTimeout: DefaultTimeout,
		ForceAttemptHTTP2:     true,
	}
	return &Sender{
		store: store,
		client: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		Now:        func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) },
		PerPartner: DefaultPerPartner, Timeout: DefaultTimeout, Lease: DefaultTimeout + 50*time.Second,
		Window: DefaultWindow, BaseDelay: 10 * time.Second, MaxDelay: time.Hour, Poll: time.Second,
		Log:  slog.New(slog.DiscardHandler),
		wake: make(chan struct{}, 1),
		busy: map[int64]int{},
	}
}

// Wake makes a running Sender look for work now rather than at its next
// poll.
func (s *Sender) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run queues and sends deliveries until ctx is done, then waits for the
// attempts in flight, which ctx cancels: their outcome is not recorded,
// so they are sent again once their lease ends.
func (s *Sender) Run(ctx context.Context) {
	t := time.NewTicker(s.Poll)
	defer t.Stop()
	defer s.wg.Wait()
	for {
		s.round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-t.C:
		}
	}
}

// dispatchBatch is how many change-log entries one dispatch reads.
const dispatchBatch = 1000

// round queues what new entries call for, then starts sending what is
// due, as far as each partner's workers allow.
func (s *Sender) round(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := s.store.DispatchWebhooks(ctx, s.Now(), dispatchBatch, s.Window)
		if err != nil {
			if ctx.Err() == nil {
				s.Log.Warn("webhooks: queueing deliveries failed", "err", err)
			}
			break
		}
		if n < dispatchBatch {
			break
		}
	}
	now := s.Now()
	partners, err := s.store.DuePartners(ctx, now)
	if err != nil {
		if ctx.Err() == nil {
			s.Log.Warn("webhooks: reading the queue failed", "err", err)
		}
		return
	}
	for _, p := range partners {
		s.mu.Lock()
		free := s.PerPartner - s.busy[p]
		s.mu.Unlock()
		if free <= 0 {
			continue
		}
		ds, err := s.store.ClaimDeliveries(ctx, p, now, now.Add(s.Lease), free)
		if err != nil {
			if ctx.Err() == nil {
				s.Log.Warn("webhooks: claiming deliveries failed", "partner_id", p, "err", err)
			}
			continue
		}
		s.mu.Lock()
		s.busy[p] += len(ds)
		s.mu.Unlock()
		for _, d := range ds {
			s.wg.Go(func() {
				s.attempt(ctx, d)
				s.mu.Lock()
				if s.busy[p]--; s.busy[p] <= 0 {
					delete(s.busy, p)
				}
				s.mu.Unlock()
				s.Wake()
			})
		}
	}
}

// attempt sends d once and records how it went.
func (s *Sender) attempt(ctx context.Context, d *Delivery) {
	body := Body(d)
	start := s.Now()
	status, err := s.post(ctx, d, body, start)
	if ctx.Err() != nil {
		return // stopping: the lease brings d back
	}
	took := s.Now().Sub(start)
	a := Attempt{ID: d.ID, Attempts: d.Attempts, At: start, StatusCode: status, Latency: took, Status: Delivered}
	if err != nil || status < 200 || status > 299 {
		a.Error = attemptError(status, err, s.Timeout)
		a.NextAttemptAt = start.Add(s.backoff(d.Attempts)).Truncate(time.Microsecond)
		a.Status = Pending
		if a.NextAttemptAt.After(d.ExpiresAt) {
			a.Status = Failed
		}
	}
	if s.Observe != nil {
		s.Observe(a.Status, took)
	}
	// The record outlives a cancellation that comes now: the answer is
	// in, and recording it saves the partner a repeat.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.store.RecordAttempt(rctx, a); err != nil {
		s.Log.Warn("webhooks: recording an attempt failed", "delivery_id", d.ID, "err", err)
	}
}

func (s *Sender) post(ctx context.Context, d *Delivery, body []byte, at time.Time) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "predictkit-webhooks/1")
	req.Header.Set(HeaderSignature, Sign(d.Secret, at, body))
	req.Header.Set(HeaderDelivery, strconv.FormatInt(d.ID, 10))
	req.Header.Set(HeaderEvent, d.Type)
	res, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	// Drain a little, so that the connection can be reused; never more.
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	return res.StatusCode, nil
}

// attemptError says why an attempt failed, in the delivery log.
func attemptError(status int, err error, timeout time.Duration) string {
	switch {
	case err == nil:
		return "answered " + strconv.Itoa(status) + " " + http.StatusText(status)
	case errors.Is(err, ErrDestination):
		if oe := (*net.OpError)(nil); errors.As(err, &oe) {
			err = oe.Err
		}
		return "refused: " + err.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %s", timeout)
	}
	msg := err.Error()
	if len(msg) > 500 {
		msg = msg[:500]
	}
	return msg
}

// backoff is the wait before the retry that follows attempt n (1 for
// the first): full jitter over an exponential bound.
func (s *Sender) backoff(n int) time.Duration {
	bound := s.BaseDelay
	for i := 1; i < n && bound < s.MaxDelay; i++ {
		bound *= 2
	}
	bound = min(bound, s.MaxDelay)
	if bound <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(bound)))
}
