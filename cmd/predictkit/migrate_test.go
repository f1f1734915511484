package main

import (
	"bytes"
	"context"
	"io/fs"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/predictkit/predictkit/storage/postgres"
	"github.com/predictkit/predictkit/storage/postgres/pgtest"
)

// migrateRun runs `predictkit migrate args...` against url.
func migrateRun(t *testing.T, url string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	full := append([]string{"migrate", "-database-url", url}, args...)
	code = run(context.Background(), full, &out, &errb)
	return code, out.String(), errb.String()
}

// migrationNames are the embedded migrations' file names, in order.
func migrationNames(t *testing.T) []string {
	t.Helper()
	entries, err := fs.ReadDir(postgres.Migrations(), ".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") {
			names = append(names, e.Name())
		}
	}
	if len(names) < 2 {
		t.Fatalf("only %d migrations embedded", len(names))
	}
	return names
}

// dbState is what an operator would look at to see whether a command
// changed the database: the tables in the URL's schema and the highest
// version goose recorded (0 when it recorded none).
func dbState(t *testing.T, url string) (tables []string, version int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range tables {
		if name == "goose_db_version" {
			if err := conn.QueryRow(ctx, `SELECT COALESCE(max(version_id), 0) FROM goose_db_version WHERE is_applied`).Scan(&version); err != nil {
				t.Fatal(err)
			}
		}
	}
	return tables, version
}

// statusLine is the line of `migrate status` output naming name.
func statusLine(t *testing.T, out, name string) string {
	t.Helper()
	for line := range strings.Lines(out) {
		if strings.Contains(line, name) {
			return line
		}
	}
	t.Fatalf("status does not list %s:\n%s", name, out)
	return ""
}

func TestMigrateCommands(t *testing.T) {
	url := pgtest.SchemaURL(t)
	names := migrationNames(t)
	last := names[len(names)-1]
	// A migration's version is the number its name starts with; numbers
	// may skip one (goose allows gaps).
	version := func(name string) int64 {
		v, err := strconv.ParseInt(strings.SplitN(name, "_", 2)[0], 10, 64)
		if err != nil {
			t.Fatalf("migration %s: %v", name, err)
		}
		return v
	}
	latest, previous := version(last), version(names[len(names)-2])

	unchanged := func(t *testing.T, wantTables int, wantVersion int64) {
		t.Helper()
		tables, version := dbState(t, url)
		if len(tables) != wantTables || version != wantVersion {
			t.Fatalf("the database changed: %d tables %v at version %d; want %d tables at version %d", len(tables), tables, version, wantTables, wantVersion)
		}
	}

	t.Run("status on an empty database lists every migration as pending and changes nothing", func(t *testing.T) {
		code, out, errs := migrateRun(t, url, "status")
		if code != 0 {
			t.Fatalf("exit %d: %s%s", code, out, errs)
		}
		for _, name := range names {
			if line := statusLine(t, out, name); !strings.Contains(line, "pending") {
				t.Errorf("%s is not pending: %q", name, line)
			}
		}
		unchanged(t, 0, 0)
	})
	t.Run("version on an empty database prints 0 and changes nothing", func(t *testing.T) {
		code, out, errs := migrateRun(t, url, "version")
		if code != 0 || strings.TrimSpace(out) != "0" {
			t.Fatalf("exit %d, printed %q: %s", code, out, errs)
		}
		unchanged(t, 0, 0)
	})
	t.Run("down on an empty database rolls back nothing, exits 1 and changes nothing", func(t *testing.T) {
		code, out, errs := migrateRun(t, url, "down")
		if code != 1 || !strings.Contains(errs, "no migration to roll back") {
			t.Fatalf("exit %d: %s%s", code, out, errs)
		}
		unchanged(t, 0, 0)
	})
	for _, args := range [][]string{{"bogus"}, {"status", "extra"}, {"up", "extra"}, {"down", "now"}, {"version", "-x"}} {
		t.Run("migrate "+strings.Join(args, " ")+" exits 2 with the usage and changes nothing", func(t *testing.T) {
			code, out, errs := migrateRun(t, url, args...)
			if code != 2 || !strings.Contains(errs, "Usage: predictkit migrate") || out != "" {
				t.Fatalf("exit %d; stdout %q; stderr %s", code, out, errs)
			}
			unchanged(t, 0, 0)
		})
	}
	t.Run("up applies every migration and prints each one", func(t *testing.T) {
		code, out, errs := migrateRun(t, url, "up")
		if code != 0 {
			t.Fatalf("exit %d: %s%s", code, out, errs)
		}
		for _, name := range names {
			if line := statusLine(t, out, name); !strings.Contains(line, "applied") {
				t.Errorf("up does not say it applied %s: %q", name, line)
			}
		}
		if !strings.Contains(out, "at version "+strconv.FormatInt(latest, 10)) {
			t.Errorf("up does not say the version it reached:\n%s", out)
		}
		if _, version := dbState(t, url); version != latest {
			t.Fatalf("at version %d after up", version)
		}
	})
	t.Run("status after up lists every migration as applied with when", func(t *testing.T) {
		code, out, errs := migrateRun(t, url, "status")
		if code != 0 {
			t.Fatalf("exit %d: %s%s", code, out, errs)
		}
		year := strconv.Itoa(time.Now().UTC().Year())
		for _, name := range names {
			if line := statusLine(t, out, name); !strings.Contains(line, "applied") || !strings.Contains(line, year) {
				t.Errorf("%s is not applied with a time: %q", name, line)
			}
		}
	})
	t.Run("version prints the current version", func(t *testing.T) {
		code, out, errs := migrateRun(t, url, "version")
		if code != 0 || strings.TrimSpace(out) != strconv.FormatInt(latest, 10) {
			t.Fatalf("exit %d, printed %q: %s", code, out, errs)
		}
	})
	t.Run("up on an up-to-date database applies nothing and says so", func(t *testing.T) {
		code, out, errs := migrateRun(t, url, "up")
		if code != 0 || !strings.Contains(out, "no migrations to apply; at version "+strconv.FormatInt(latest, 10)) {
			t.Fatalf("exit %d: %s%s", code, out, errs)
		}
	})
	t.Run("migrate bogus on a migrated database exits 2 and changes nothing", func(t *testing.T) {
		tables, _ := dbState(t, url)
		code, _, errs := migrateRun(t, url, "bogus")
		if code != 2 || !strings.Contains(errs, `unknown operation "bogus"`) {
			t.Fatalf("exit %d: %s", code, errs)
		}
		unchanged(t, len(tables), latest)
	})
	t.Run("down rolls back exactly the last migration and prints it", func(t *testing.T) {
		code, out, errs := migrateRun(t, url, "down")
		if code != 0 {
			t.Fatalf("exit %d: %s%s", code, out, errs)
		}
		if !strings.Contains(out, "rolled back "+last) || !strings.Contains(out, "at version "+strconv.FormatInt(previous, 10)) {
			t.Fatalf("down printed:\n%s", out)
		}
		if strings.Contains(out, names[len(names)-2]) {
			t.Fatalf("down names a second migration:\n%s", out)
		}
		if _, version := dbState(t, url); version != previous {
			t.Fatalf("at version %d after down", version)
		}
		_, status, _ := migrateRun(t, url, "status")
		if line := statusLine(t, status, last); !strings.Contains(line, "pending") {
			t.Errorf("%s is not pending after down: %q", last, line)
		}
		if line := statusLine(t, status, names[len(names)-2]); !strings.Contains(line, "applied") {
			t.Errorf("%s is not applied after down: %q", names[len(names)-2], line)
		}
	})
	t.Run("bare migrate applies what is pending and prints it", func(t *testing.T) {
		code, out, errs := migrateRun(t, url)
		if code != 0 || !strings.Contains(out, last) || strings.Contains(out, names[len(names)-2]) {
			t.Fatalf("exit %d: %s%s", code, out, errs)
		}
		if _, version := dbState(t, url); version != latest {
			t.Fatalf("at version %d after bare migrate", version)
		}
	})
	t.Run("the operation may come before the flags", func(t *testing.T) {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"migrate", "version", "-database-url", url}, &out, &errb)
		if code != 0 || strings.TrimSpace(out.String()) != strconv.FormatInt(latest, 10) {
			t.Fatalf("exit %d, printed %q: %s", code, out.String(), errb.String())
		}
	})
}

func TestMigrateUsage(t *testing.T) {
	t.Setenv("PREDICTKIT_DATABASE_URL", "postgres://operator:s3cret-pw@db.example/prod")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"migrate", "-h"}, &out, &errb); code != 0 {
		t.Fatalf("migrate -h exited %d", code)
	}
	for _, want := range []string{"up", "status", "down", "version", "-database-url", "PREDICTKIT_DATABASE_URL", "no operation"} {
		if !strings.Contains(out.String()+errb.String(), want) {
			t.Errorf("migrate -h does not mention %q:\n%s%s", want, out.String(), errb.String())
		}
	}
	if strings.Contains(out.String()+errb.String(), "s3cret-pw") {
		t.Errorf("migrate -h shows the database password:\n%s%s", out.String(), errb.String())
	}
}
