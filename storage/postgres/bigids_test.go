package postgres_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
	"github.com/predictkit/predictkit/webhook"
)

// TestDeliveryLogPagesThroughIDsPastInt32: a delivery log whose ids are
// past 2^31 pages by its cursor (an id) like any other, and a cursor up to
// int64's largest reads from the newest. The cursor was compared with an
// int4 literal, which typed it int4: such a cursor could not be sent.
func TestDeliveryLogPagesThroughIDsPastInt32(t *testing.T) {
	s := pgtest.New(t)
	ctx := context.Background()
	const start = 1<<31 + 10
	if _, err := s.DB().Exec(ctx, `ALTER SEQUENCE webhook_deliveries_id_seq RESTART WITH 2147483658`); err != nil {
		t.Fatal(err)
	}
	p := &partner.Partner{Name: "Bookie"}
	if err := s.CreatePartner(ctx, p, []byte("hash")); err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	rows, err := s.DB().Query(ctx, `INSERT INTO webhook_deliveries (partner_id, type, market_id, event_id, won_side,
		position_id, created_at, next_attempt_at, expires_at)
		SELECT $1, 'bet.settled', 1, 1, 1, g, $2, $2, $2 FROM generate_series(1, 3) g RETURNING id`, p.ID, at)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	if ids[0] != start {
		t.Fatalf("the first delivery is %d, want %d", ids[0], start)
	}
	page := func(before int64) []int64 {
		t.Helper()
		ds, err := s.Deliveries(ctx, p.ID, before, 10)
		if err != nil {
			t.Fatalf("Deliveries after cursor %d: %v", before, err)
		}
		var out []int64
		for _, d := range ds {
			out = append(out, d.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		before int64
		want   []int64
	}{
		{"the first page reads from the newest", 0, []int64{ids[2], ids[1], ids[0]}},
		{"a cursor reads what is older", ids[2], []int64{ids[1], ids[0]}},
		{"the oldest's cursor reads nothing", ids[0], nil},
		{"a cursor past every id reads from the newest", math.MaxInt64, []int64{ids[2], ids[1], ids[0]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := page(tc.before); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("a delivery past 2^31 is redelivered", func(t *testing.T) {
		if err := s.Redeliver(ctx, p.ID, ids[1], at, at.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.Redeliver(ctx, p.ID, math.MaxInt64, at, at.Add(time.Hour)); !errors.Is(err, webhook.ErrDeliveryNotFound) {
			t.Fatalf("a delivery that does not exist: %v", err)
		}
	})
}
