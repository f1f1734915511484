package server

import "testing"

func TestAppRoute(t *testing.T) {
	for p, want := range map[string]bool{
		"/":                   true,
		"/events/42":          true,
		"/profile/":           true,
		"/admin/users":        true,
		"/reset-password":     true,
		"/apiary":             true, // only begins like /api
		"/api":                false,
		"/api/":               false,
		"/api/v1/nope":        false,
		"/API/V1/EVENTS":      false,
		"/Docs":               false,
		"/docs/x/y":           false,
		"/healthz":            false,
		"/readyz/x":           false,
		"/metrics":            false,
		"/favicon.ico":        false,
		"/robots.txt":         false,
		"/users/someone.else": false,
		"/events.v2/1":        true, // a dot before the last segment is no file name
	} {
		if got := appRoute(p); got != want {
			t.Errorf("appRoute(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestETagMatch(t *testing.T) {
	const tag = `W/"abc"`
	cases := []struct {
		name, header string
		want         bool
	}{
		{"no header", "", false},
		{"the tag", `W/"abc"`, true},
		{"the tag without W/", `"abc"`, true},
		{"the tag in a list", `"x", W/"abc"`, true},
		{"any", "*", true},
		{"another tag", `W/"abd"`, false},
		{"the tag's value unquoted", `abc`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := etagMatch(c.header, tag); got != c.want {
				t.Errorf("etagMatch(%q) = %v", c.header, got)
			}
		})
	}
}

func TestNormalizeOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://app.example.com":      "https://app.example.com",
		"HTTPS://App.Example.COM":      "https://app.example.com",
		"https://app.example.com:443":  "https://app.example.com",
		"http://app.example.com:80":    "http://app.example.com",
		"http://app.example.com:443":   "http://app.example.com:443",
		"https://app.example.com:8443": "https://app.example.com:8443",
		"https://app.example.com/":     "https://app.example.com",
		"http://[::1]:8080":            "http://[::1]:8080",
		"null":                         "",
		"":                             "",
		"ftp://app.example.com":        "",
		"https://app.example.com/path": "",
		"https://user@app.example.com": "",
		"https://app.example.com?x=1":  "",
		"app.example.com":              "",
		"https://app.example.com#frag": "",
		"javascript:alert(1)":          "",
	} {
		if got := normalizeOrigin(in); got != want {
			t.Errorf("normalizeOrigin(%q) = %q, want %q", in, got, want)
		}
	}
}
