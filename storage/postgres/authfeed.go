package postgres

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/account"
)

// authChannel is where the triggers of migrations 00008 and 00010
// announce committed changes to access tokens, users and partners.
const authChannel = "predictkit_auth"

// WatchAuth calls changed with every change to an access token, a user or
// a partner of the store's schema that anyone commits to the database
// (this process, another server, SQL by hand), until ctx is done; it then
// returns nil. With it, several servers on one database can each cache
// authentications (account.Service.CacheAuth, partner.Service.CacheKeys)
// and still see a logout, a role change or a disabled partner made on
// another at once.
//
// It listens on a connection of its own, outside the pool. live is called
// with nil once it listens, and with the reason each time the connection
// is lost: changes made until it is back are missed, so a cache must be
// off meanwhile. It reconnects on its own, waiting 100 ms at first and up
// to 5 s between attempts.
func (s *Store) WatchAuth(ctx context.Context, live func(error), changed func(account.Invalidation)) error {
	wait := 100 * time.Millisecond
	for {
		err := s.watchAuth(ctx, func() { wait = 100 * time.Millisecond; live(nil) }, changed)
		if ctx.Err() != nil {
			live(ctx.Err())
			return nil
		}
		live(err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

func (s *Store) watchAuth(ctx context.Context, listening func(), changed func(account.Invalidation)) error {
	conn, done, err := s.listenConn(ctx, "auth changes")
	if err != nil {
		return fmt.Errorf("postgres: auth changes: connect: %w", err)
	}
	defer done()
	var schema string
	var triggers bool
	// Without the triggers (a schema not migrated yet) nothing would ever
	// be announced, and a cache would trust stale entries for their TTL.
	if err := conn.QueryRow(ctx, `SELECT COALESCE(current_schema(), ''),
		EXISTS (SELECT 1 FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
			WHERE g.tgname = 'partners_auth_change' AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()))`).Scan(&schema, &triggers); err != nil {
		return fmt.Errorf("postgres: auth changes: %w", err)
	}
	if !triggers {
		return errors.New("postgres: auth changes: the schema has no change triggers (run the migrations)")
	}
	if _, err := conn.Exec(ctx, "LISTEN "+authChannel); err != nil {
		return fmt.Errorf("postgres: auth changes: listen: %w", err)
	}
	listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("postgres: auth changes: %w", err)
		}
		if inv, ok := parseAuthChange(n.Payload, schema); ok {
			changed(inv)
		}
	}
}

// parseAuthChange reads a payload of the triggers: "<schema>:t:<hex hash>",
// "<schema>:u:<user id>" or "<schema>:p:<partner id>". One of another schema is not ours (ok
// false); one of ours that does not parse drops everything, to be safe.
func parseAuthChange(payload, schema string) (account.Invalidation, bool) {
	rest, ok := strings.CutPrefix(payload, schema+":")
	if !ok {
		return account.Invalidation{}, false
	}
	kind, v, _ := strings.Cut(rest, ":")
	switch kind {
	case "t":
		if h, err := hex.DecodeString(v); err == nil {
			return account.Invalidation{TokenHash: h}, true
		}
	case "u":
		if id, err := strconv.ParseInt(v, 10, 64); err == nil && id > 0 {
			return account.Invalidation{UserID: id}, true
		}
	case "p":
		if id, err := strconv.ParseInt(v, 10, 64); err == nil && id > 0 {
			return account.Invalidation{PartnerID: id}, true
		}
	}
	return account.Invalidation{All: true}, true
}

// listenConn opens a connection of its own, outside the pool, for a
// LISTEN that lasts as long as the server, and returns it with the
// function that closes it. It is named for what it listens to, so that an
// operator can tell it in pg_stat_activity: it is a connection of a
// server that is always idle.
func (s *Store) listenConn(ctx context.Context, what string) (*pgx.Conn, func(), error) {
	cc := s.pool.Config().ConnConfig
	if cc.RuntimeParams == nil {
		cc.RuntimeParams = map[string]string{}
	}
	cc.RuntimeParams["application_name"] = strings.TrimSpace("predictkit " + what + " " + s.schema)
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, nil, err
	}
	return conn, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = conn.Close(ctx)
	}, nil
}
