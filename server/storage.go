package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.uber.org/fx"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/chat"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/p2p"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/social"
	"github.com/predictkit/predictkit/storage/memory"
	"github.com/predictkit/predictkit/storage/postgres"
)

// Store is every domain store the server composes. storage/memory and
// storage/postgres implement it; a new domain adds its Store here.
type Store interface {
	account.Store
	market.Store
	partner.Store
	social.CommentStore
	social.NotificationStore
	p2p.Store
	chat.Store
}

// Health reports whether the store answers; /readyz calls it.
type Health func(ctx context.Context) error

// StoreKind names the store in use: "memory", "postgres" or "custom" (a
// Config.Store).
type StoreKind string

// Storage is what the storage module provides.
type Storage struct {
	fx.Out
	Store    Store
	Accounts account.Store
	Markets  market.Store
	Partners partner.Store
	Health   Health
	Kind     StoreKind
}

// StorageModule chooses the store: Config.Store when set, PostgreSQL when
// Config.DatabaseURL is set (migrated at start unless MigrateOnStart is
// off, closed at stop), the in-memory store otherwise.
var StorageModule = fx.Module("storage", fx.Provide(newStorage))

func newStorage(lc fx.Lifecycle, cfg Config, log *slog.Logger) (Storage, error) {
	switch {
	case cfg.Store != nil:
		return storageOf(cfg.Store, "custom"), nil
	case cfg.DatabaseURL == "":
		log.Info("storage: in memory (data is lost at exit)")
		return storageOf(memory.New(), "memory"), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pg, err := postgres.New(ctx, cfg.DatabaseURL)
	if err != nil {
		return Storage{}, fmt.Errorf("storage: connect to PostgreSQL: %w", err)
	}
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			if !cfg.MigrateOnStart {
				return nil
			}
			if err := pg.Migrate(ctx); err != nil {
				return fmt.Errorf("storage: migrate: %w", err)
			}
			log.Info("storage: PostgreSQL migrated")
			return nil
		},
		OnStop: func(context.Context) error {
			pg.Close()
			return nil
		},
	})
	log.Info("storage: PostgreSQL")
	return storageOf(pg, "postgres"), nil
}

func storageOf(s Store, kind StoreKind) Storage {
	h := func(context.Context) error { return nil }
	if p, ok := s.(interface{ Ping(context.Context) error }); ok {
		h = p.Ping
	}
	return Storage{Store: s, Accounts: s, Markets: s, Partners: s, Health: h, Kind: kind}
}
