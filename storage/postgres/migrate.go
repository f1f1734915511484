package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/crc32"
	"path"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// MigrationResult is one migration applied or rolled back.
type MigrationResult struct {
	Version  int64
	Name     string // the file name, e.g. 00001_init.sql
	Duration time.Duration
}

// MigrationStatus is one embedded migration and whether the database has
// it. AppliedAt is zero for a pending migration.
type MigrationStatus struct {
	Version   int64
	Name      string
	Applied   bool
	AppliedAt time.Time
}

// ErrNothingToRollBack is MigrateDown's answer when no migration is
// applied.
var ErrNothingToRollBack = errors.New("postgres: no migration to roll back")

// Migrate applies every pending migration. It is safe to run concurrently
// (from several servers starting at once): a session-level advisory lock
// lets one run while the others wait.
func (s *Store) Migrate(ctx context.Context) error {
	_, err := s.MigrateUp(ctx)
	return err
}

// Migrate connects to databaseURL, applies every pending migration and
// disconnects.
func Migrate(ctx context.Context, databaseURL string, opts ...Option) error {
	s, err := New(ctx, databaseURL, opts...)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Migrate(ctx)
}

// MigrateUp applies every pending migration, creating the store's schema
// (WithSchema) if need be, and returns those it applied in order: none
// when the database was up to date. When one fails, those applied before
// it are returned with the error.
func (s *Store) MigrateUp(ctx context.Context) ([]MigrationResult, error) {
	if s.schema != "" {
		if _, err := s.pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{s.schema}.Sanitize()); err != nil {
			return nil, fmt.Errorf("postgres: create schema: %w", err)
		}
	}
	var applied []MigrationResult
	err := s.withProvider(ctx, func(p *goose.Provider) error {
		res, err := p.Up(ctx)
		if pe := (*goose.PartialError)(nil); errors.As(err, &pe) {
			res = pe.Applied
		}
		for _, r := range res {
			if r.Error == nil {
				applied = append(applied, result(r))
			}
		}
		return err
	})
	if err != nil {
		return applied, fmt.Errorf("postgres: migrate up: %w", err)
	}
	return applied, nil
}

// MigrateDown rolls back the most recently applied migration, exactly
// one, and returns it; ErrNothingToRollBack when none is applied. A
// database goose never touched is left as it is.
func (s *Store) MigrateDown(ctx context.Context) (MigrationResult, error) {
	tracked, err := s.versionTableExists(ctx)
	if err != nil {
		return MigrationResult{}, fmt.Errorf("postgres: migrate down: %w", err)
	}
	if !tracked {
		return MigrationResult{}, ErrNothingToRollBack
	}
	var out MigrationResult
	err = s.withProvider(ctx, func(p *goose.Provider) error {
		r, err := p.Down(ctx)
		if errors.Is(err, goose.ErrNoNextVersion) {
			return ErrNothingToRollBack
		}
		if err != nil {
			return err
		}
		out = result(r)
		return nil
	})
	if errors.Is(err, ErrNothingToRollBack) {
		return MigrationResult{}, err
	}
	if err != nil {
		return MigrationResult{}, fmt.Errorf("postgres: migrate down: %w", err)
	}
	return out, nil
}

// MigrationStatus lists every embedded migration in order with whether
// it is applied. It changes nothing: on a database goose never touched
// every migration is pending and no version table is created.
func (s *Store) MigrationStatus(ctx context.Context) ([]MigrationStatus, error) {
	tracked, err := s.versionTableExists(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: migration status: %w", err)
	}
	var out []MigrationStatus
	err = s.withProvider(ctx, func(p *goose.Provider) error {
		if !tracked {
			for _, src := range p.ListSources() {
				out = append(out, MigrationStatus{Version: src.Version, Name: path.Base(src.Path)})
			}
			return nil
		}
		st, err := p.Status(ctx)
		if err != nil {
			return err
		}
		for _, m := range st {
			ms := MigrationStatus{Version: m.Source.Version, Name: path.Base(m.Source.Path), Applied: m.State == goose.StateApplied}
			if ms.Applied {
				ms.AppliedAt = m.AppliedAt.UTC()
			}
			out = append(out, ms)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: migration status: %w", err)
	}
	return out, nil
}

// MigrationVersion is the highest migration version applied, 0 when none
// is. It changes nothing.
func (s *Store) MigrationVersion(ctx context.Context) (int64, error) {
	tracked, err := s.versionTableExists(ctx)
	if err != nil || !tracked {
		if err != nil {
			err = fmt.Errorf("postgres: migration version: %w", err)
		}
		return 0, err
	}
	var v int64
	err = s.withProvider(ctx, func(p *goose.Provider) error {
		v, err = p.GetDBVersion(ctx)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: migration version: %w", err)
	}
	return v, nil
}

// versionTable is goose's version table, kept in the store's schema.
const versionTable = "goose_db_version"

// versionTableExists says whether goose's version table is in the
// store's schema (false when the schema itself does not exist), the way
// goose itself looks for it.
func (s *Store) versionTableExists(ctx context.Context) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_tables
		WHERE schemaname = current_schema() AND tablename = $1)`, versionTable).Scan(&ok)
	return ok, err
}

// withProvider runs f with a goose provider over the store's pool. Each
// schema gets its own advisory lock, so that migrations of unrelated
// schemas in one database (tests) do not wait for each other, whether the
// schema came from WithSchema or from the URL.
func (s *Store) withProvider(ctx context.Context, f func(*goose.Provider) error) error {
	var schema string
	if err := s.pool.QueryRow(ctx, "SELECT COALESCE(current_schema(), '')").Scan(&schema); err != nil {
		return err
	}
	db := stdlib.OpenDBFromPool(s.pool)
	defer db.Close()
	p, err := provider(db, schema)
	if err != nil {
		return err
	}
	return f(p)
}

func provider(db *sql.DB, schema string) (*goose.Provider, error) {
	lockID := int64(crc32.ChecksumIEEE([]byte("goose:" + schema)))
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(lockID), lock.WithLockTimeout(1, 300))
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(goose.DialectPostgres, db, Migrations(),
		goose.WithSessionLocker(locker), goose.WithDisableGlobalRegistry(true))
}

func result(r *goose.MigrationResult) MigrationResult {
	return MigrationResult{Version: r.Source.Version, Name: path.Base(r.Source.Path), Duration: r.Duration}
}
