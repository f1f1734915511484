package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.uber.org/fx"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/chat"
	"github.com/predictkit/predictkit/deposit"
	"github.com/predictkit/predictkit/leaderboard"
	"github.com/predictkit/predictkit/market"
	"github.com/predictkit/predictkit/p2p"
	"github.com/predictkit/predictkit/partner"
	"github.com/predictkit/predictkit/social"
	"github.com/predictkit/predictkit/stats"
	"github.com/predictkit/predictkit/storage/memory"
	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/telegram"
	"github.com/predictkit/predictkit/webhook"
	"github.com/predictkit/predictkit/withdrawal"
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
	webhook.Store
	leaderboard.Store
	withdrawal.Store
	deposit.Store
	telegram.Store
	stats.Store
}

// Health reports whether the store answers; /readyz calls it.
type Health func(ctx context.Context) error

// The optional capabilities of a Store. Each is looked for once, in
// storageOf, and handed to the modules that use it as a value of its own.
type (
	// Pinger is a store that can tell whether it answers (/readyz).
	Pinger interface {
		Ping(ctx context.Context) error
	}
	// AuthWatcher is a store that several processes share and that
	// announces every committed change to tokens, users and partners
	// (storage/postgres); the authentication caches depend on it.
	AuthWatcher interface {
		WatchAuth(ctx context.Context, live func(error), changed func(account.Invalidation)) error
	}
	// PoolStater is a store on a PostgreSQL connection pool, whose
	// statistics /metrics exports.
	PoolStater interface {
		DB() *pgxpool.Pool
	}
)

// Capabilities are the optional capabilities of the store in use; a
// field is nil when the store lacks it.
type Capabilities struct {
	AuthFeed AuthWatcher
	Pool     *pgxpool.Pool
}

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
	Caps     Capabilities
	// Replicas are the store's read replicas; nil without.
	Replicas *Replicas
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
	opts := []postgres.Option{postgres.WithSettlementChunks(cfg.SettleChunk, float64(cfg.SettleShare)/100)}
	if urls := splitList(cfg.DatabaseReplicaURLs); len(urls) > 0 {
		opts = append(opts, postgres.WithReplicas(urls, postgres.ReplicaConfig{MaxWait: cfg.ReplicaMaxWait, MaxLag: cfg.ReplicaMaxLag}))
	}
	pg, err := postgres.New(ctx, cfg.DatabaseURL, opts...)
	if err != nil {
		return Storage{}, fmt.Errorf("storage: connect to PostgreSQL: %w", err)
	}
	resume, stopResume := context.WithCancel(context.Background())
	var resumed chan struct{}
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			if cfg.MigrateOnStart {
				if err := pg.Migrate(ctx); err != nil {
					return fmt.Errorf("storage: migrate: %w", err)
				}
				log.Info("storage: PostgreSQL migrated")
			}
			// A settlement this or another instance left between two
			// chunks goes on, in the background: its market takes no
			// trade until it is done.
			resumed = make(chan struct{})
			go func() {
				defer close(resumed)
				if err := pg.ResumeSettlements(resume); err != nil && resume.Err() == nil {
					log.Error("storage: resume settlements", "err", err)
				}
			}()
			return nil
		},
		OnStop: func(context.Context) error {
			stopResume()
			if resumed != nil {
				<-resumed
			}
			pg.Close()
			return nil
		},
	})
	log.Info("storage: PostgreSQL", slog.Int("replicas", len(splitList(cfg.DatabaseReplicaURLs))))
	return storageOf(pg, "postgres"), nil
}

func storageOf(s Store, kind StoreKind) Storage {
	h := func(context.Context) error { return nil }
	if p, ok := s.(Pinger); ok {
		h = p.Ping
	}
	var caps Capabilities
	if w, ok := s.(AuthWatcher); ok {
		caps.AuthFeed = w
	}
	if p, ok := s.(PoolStater); ok {
		caps.Pool = p.DB()
	}
	return Storage{Store: s, Accounts: s, Markets: s, Partners: s, Health: h, Kind: kind, Caps: caps, Replicas: replicasOf(s)}
}
