package server_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/predictkit/predictkit/account"
)

// secrets are the plaintext credentials a test created: none of them may
// be stored as given.
type secrets struct {
	password, token, key, chat string
}

func (s secrets) each() map[string]string {
	return map[string]string{"a password": s.password, "an access token": s.token, "a partner key": s.key, "a chat session secret": s.chat}
}

// makeSecrets registers a user, logs in, creates a partner and opens a
// chat session, and returns their plaintexts.
func makeSecrets(t *testing.T, h *harness) secrets {
	t.Helper()
	u := h.register(t, "secretive") // password "password-secretive"
	c := &chatClient{token: u.token}
	h.openChat(t, c)
	return secrets{password: "password-secretive", token: u.token, key: h.createPartner(t, "Secret keeper", 0).Key, chat: c.cookie}
}

// TestSecretsAreStoredAsHashes: passwords (bcrypt), access tokens,
// partner keys and chat secrets (SHA-256) are stored only as hashes. On
// memory the store's whole state is searched, on PostgreSQL every column
// of every table, for each plaintext (as text, and hex-encoded as a
// bytea would show it).
func TestSecretsAreStoredAsHashes(t *testing.T) {
	t.Run("through the store's own methods", func(t *testing.T) {
		eachStore(t, func(t *testing.T, h *harness) {
			s := makeSecrets(t, h)
			ctx := context.Background()
			u, _, err := h.store.UserByToken(ctx, account.HashToken(s.token), time.Now())
			if err != nil {
				t.Fatalf("the token's hash finds no user: %v", err)
			}
			if _, _, err := h.store.UserByToken(ctx, []byte(s.token), time.Now()); err == nil {
				t.Error("the plaintext token is a key of the token table")
			}
			_, hash, err := h.store.UserByEmail(ctx, u.Email)
			if err != nil {
				t.Fatal(err)
			}
			if hash == s.password || bcrypt.CompareHashAndPassword([]byte(hash), []byte(s.password)) != nil {
				t.Errorf("the stored password %q is not a bcrypt hash of the password", hash)
			}
			if _, err := h.store.PartnerByKey(ctx, account.HashToken(s.key)); err != nil {
				t.Errorf("the key's hash finds no partner: %v", err)
			}
			if _, err := h.store.PartnerByKey(ctx, []byte(s.key)); err == nil {
				t.Error("the plaintext partner key is a key of the partner table")
			}
			if _, err := h.store.ChatSessionBySecret(ctx, []byte(s.chat)); err == nil {
				t.Error("the plaintext chat secret is a key of the session table")
			}
		})
	})
	t.Run("in the memory store's whole state", func(t *testing.T) {
		store := memoryStore()
		h := newHarness(t, store)
		s := makeSecrets(t, h)
		for what, plain := range s.each() {
			if path, ok := findString(reflect.ValueOf(store), []string{plain, hex.EncodeToString([]byte(plain))}); ok {
				t.Errorf("%s is stored in plaintext at %s", what, path)
			}
		}
	})
	t.Run("in every column of every PostgreSQL table", func(t *testing.T) {
		if postgresStore == nil {
			t.Skip("no PostgreSQL")
		}
		store := postgresStore(t)
		h := newHarness(t, store)
		s := makeSecrets(t, h)
		db := store.(interface{ DB() *pgxpool.Pool }).DB()
		ctx := context.Background()
		rows, err := db.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
		if err != nil {
			t.Fatal(err)
		}
		var tables []string
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				t.Fatal(err)
			}
			tables = append(tables, name)
		}
		if rows.Err() != nil || len(tables) < 10 {
			t.Fatalf("tables %v, %v", tables, rows.Err())
		}
		for _, table := range tables {
			rows, err := db.Query(ctx, fmt.Sprintf(`SELECT t::text FROM %q t`, table))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var row string
				if err := rows.Scan(&row); err != nil {
					t.Fatal(err)
				}
				for what, plain := range s.each() {
					if strings.Contains(row, plain) || strings.Contains(row, hex.EncodeToString([]byte(plain))) {
						t.Errorf("%s is stored in plaintext in table %s: %s", what, table, row)
					}
				}
			}
			rows.Close()
		}
	})
}

// findString walks v (pointers, maps, slices, structs, unexported fields
// included) and reports the first string or byte slice that contains one
// of needles.
func findString(v reflect.Value, needles []string) (string, bool) {
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value, path string) (string, bool)
	contains := func(s string) bool {
		for _, n := range needles {
			if strings.Contains(s, n) {
				return true
			}
		}
		return false
	}
	walk = func(v reflect.Value, path string) (string, bool) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				return "", false
			}
			if v.Kind() == reflect.Pointer {
				if seen[v.Pointer()] {
					return "", false
				}
				seen[v.Pointer()] = true
			}
			return walk(v.Elem(), path)
		case reflect.String:
			if contains(v.String()) {
				return path, true
			}
		case reflect.Slice, reflect.Array:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				b := make([]byte, v.Len())
				for i := range b {
					b[i] = byte(v.Index(i).Uint())
				}
				if contains(string(b)) {
					return path, true
				}
				return "", false
			}
			for i := range v.Len() {
				if p, ok := walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); ok {
					return p, true
				}
			}
		case reflect.Map:
			it := v.MapRange()
			for it.Next() {
				if p, ok := walk(it.Key(), path+"{key}"); ok {
					return p, true
				}
				if p, ok := walk(it.Value(), path+"{value}"); ok {
					return p, true
				}
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if p, ok := walk(v.Field(i), path+"."+v.Type().Field(i).Name); ok {
					return p, true
				}
			}
		}
		return "", false
	}
	return walk(v, "store")
}
