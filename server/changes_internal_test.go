package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/social"
	"github.com/predictkit/predictkit/storage/memory"
)

func TestStreamRetentionSetting(t *testing.T) {
	cases := []struct {
		name, value string
		want        time.Duration
		ok          bool
	}{
		{"unset, it keeps a day", "", DefaultStreamRetention, true},
		{"a Go duration is read", "90m", 90 * time.Minute, true},
		{"a minute is the least", "1m", time.Minute, true},
		{"less than a minute is refused", "30s", 0, false},
		{"zero is refused", "0", 0, false},
		{"a number without a unit is refused", "24", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := configFrom(func(k string) (string, bool) {
				if k == "PREDICTKIT_STREAM_RETENTION" {
					return c.value, true
				}
				return "", false
			})
			if (err == nil) != c.ok {
				t.Fatalf("PREDICTKIT_STREAM_RETENTION=%q: %v", c.value, err)
			}
			if c.ok && cfg.StreamRetention != c.want {
				t.Fatalf("PREDICTKIT_STREAM_RETENTION=%q reads %s, want %s", c.value, cfg.StreamRetention, c.want)
			}
			if !c.ok && !strings.Contains(err.Error(), "PREDICTKIT_STREAM_RETENTION") {
				t.Errorf("the error does not name the variable: %v", err)
			}
		})
	}
	t.Run("a retention set in code below a minute is refused, and zero is the default", func(t *testing.T) {
		if err := (Config{StreamRetention: time.Second}).Validate(); err == nil || !strings.Contains(err.Error(), "PREDICTKIT_STREAM_RETENTION") {
			t.Fatalf("Validate = %v", err)
		}
		if got := (Config{}).withDefaults().StreamRetention; got != DefaultStreamRetention {
			t.Fatalf("the default is %s", got)
		}
	})
	t.Run("serve -h lists it with its default", func(t *testing.T) {
		var b strings.Builder
		PrintSettings(&b)
		for line := range strings.Lines(b.String()) {
			if f := strings.Fields(line); len(f) > 3 && f[0] == "-stream-retention" {
				if f[1] != "PREDICTKIT_STREAM_RETENTION" || f[2] != "24h" {
					t.Fatalf("listed as %q", line)
				}
				return
			}
		}
		t.Fatalf("not listed:\n%s", b.String())
	})
}

func TestPruneChanges(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	acc := account.NewService(s)
	acc.BcryptCost = 4
	u, _, err := acc.Register(ctx, account.Registration{Email: "p@example.com", Password: "password123", Name: "P"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acc.Credit(ctx, u.ID, 100, false); err != nil {
		t.Fatal(err)
	}
	b, _ := s.ChangeBounds(ctx)
	if b.Last == 0 {
		t.Fatal("a credit wrote no entry")
	}
	// An hour from now, with a retention of 30 minutes, the entry is old.
	later := func() time.Time { return time.Now().Add(time.Hour) }
	run, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		pruneChanges(run, s, 30*time.Minute, time.Hour, later, slog.New(slog.NewTextHandler(io.Discard, nil)))
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := s.ChangeBounds(ctx)
		if b.Pruned == b.Last {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not pruned: %+v", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	<-done
}

// The entries of comments and notifications are what the API answers for
// them: a stream sends the same objects as the lists.
func TestChangeDataMatchesTheViews(t *testing.T) {
	at := time.Date(2030, 5, 6, 7, 8, 9, 123456000, time.UTC)
	c := &social.Comment{ID: 7, EventID: 3, ParentID: 5, UserID: 11, Content: `a "quoted" <b>reply</b>`, RepliesCount: 0, CreatedAt: at,
		Author: social.Author{ID: 11, Name: "Ann", Nickname: "ann", AvatarURL: "https://example.com/a.png"}}
	n := &social.Notification{ID: 9, UserID: 11, Type: social.TypeTradeExecuted, RelatedID: 3, RelatedType: social.RelatedEvent, CreatedAt: at,
		Data: social.NotificationData{MarketName: "Rain", Side: "YES", Action: "buy", Shares: 1200, Amount: 550}}
	sameJSON(t, "comment", social.CommentChange(c).Data, commentView(c), nil)
	sameJSON(t, "notification", social.NotificationChange(n).Data, notificationViews([]*social.Notification{n}, "en")[0], []string{"data"})
}

// sameJSON fails unless data is view as JSON, except for the extra keys
// data may have beside it.
func sameJSON(t *testing.T, what string, data json.RawMessage, view any, extra []string) {
	t.Helper()
	var got, want map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(view)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for _, k := range extra {
		if _, ok := got[k]; !ok {
			t.Errorf("%s entry lacks %q", what, k)
		}
		delete(got, k)
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s entry\n%s\nthe API shows\n%s", what, g, w)
	}
}
