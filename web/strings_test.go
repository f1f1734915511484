package web_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestStrings: the app (assets/strings.js), the operator console
// (assets/admin/i18n-admin.js) and the statistics pages both share
// (assets/stats/strings.js) each have every string in English and in
// Russian, with the same placeholders, and their modules ask for no
// string they lack.
func TestStrings(t *testing.T) {
	assets := filepath.Join("static", "assets")
	for _, tc := range []struct {
		name    string
		table   string   // the file of the strings
		decl    string   // how a table starts, before its name
		modules []string // globs of the modules that use them
		call    string   // the function that looks a string up
		least   int      // strings each table has at the least
	}{
		{"the app", filepath.Join(assets, "strings.js"), "export const ", []string{filepath.Join(assets, "*.js"), filepath.Join(assets, "pages", "*.js")}, "t", 250},
		{"the operator console", filepath.Join(assets, "admin", "i18n-admin.js"), "const ", []string{filepath.Join(assets, "admin", "*.js")}, "ta", 100},
		{"the statistics pages", filepath.Join(assets, "stats", "strings.js"), "const ", []string{filepath.Join(assets, "stats", "*.js")}, "t", 40},
	} {
		src, err := os.ReadFile(tc.table)
		if err != nil {
			t.Fatal(err)
		}
		table := func(t *testing.T, lang string) map[string]string {
			t.Helper()
			start := strings.Index(string(src), tc.decl+lang+" = {\n")
			if start < 0 {
				t.Fatalf("%s has no table %s", tc.table, lang)
			}
			body := string(src)[start:]
			body = body[:strings.Index(body, "\n};")]
			out := map[string]string{}
			for _, m := range regexp.MustCompile(`(?m)^\s*'([^']+)': '((?:[^'\\]|\\.)*)',$`).FindAllStringSubmatch(body, -1) {
				out[m[1]] = m[2]
			}
			if len(out) < tc.least {
				t.Fatalf("table %s of %s has only %d strings", lang, tc.table, len(out))
			}
			return out
		}
		placeholders := regexp.MustCompile(`\{\w+\}`)
		sorted := func(s string) string {
			p := placeholders.FindAllString(s, -1)
			slices.Sort(p)
			return strings.Join(p, " ")
		}
		t.Run(tc.name+" has every English string in Russian with the same placeholders, and the other way round", func(t *testing.T) {
			en, ru := table(t, "en"), table(t, "ru")
			for k, v := range en {
				r, ok := ru[k]
				if !ok {
					t.Errorf("%s has no Russian string", k)
				} else if sorted(v) != sorted(r) {
					t.Errorf("%s: placeholders %q in English, %q in Russian", k, sorted(v), sorted(r))
				}
			}
			for k := range ru {
				if _, ok := en[k]; !ok {
					t.Errorf("%s has no English string", k)
				}
			}
		})
		t.Run(tc.name+" asks only for strings it has", func(t *testing.T) {
			en := table(t, "en")
			used := 0
			call := regexp.MustCompile(`\b` + tc.call + `\('([^']+)'\s*[,)]`)
			for _, glob := range tc.modules {
				files, err := filepath.Glob(glob)
				if err != nil || len(files) == 0 {
					t.Fatalf("no modules %s: %v", glob, err)
				}
				for _, f := range files {
					b, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					code := regexp.MustCompile(`(?m)^\s*//.*$`).ReplaceAll(b, nil) // a comment's example is no use
					for _, m := range call.FindAllStringSubmatch(string(code), -1) {
						used++
						if _, ok := en[m[1]]; !ok {
							t.Errorf("%s asks for %s, which %s lacks", f, m[1], filepath.Base(tc.table))
						}
					}
				}
			}
			if used < tc.least/2 {
				t.Errorf("only %d strings found in use", used)
			}
		})
	}
}
