package server

import "testing"

func TestRedactURL(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"one URL loses its password", "nats://user:hunter2@n1:4222", "nats://user:xxxxx@n1:4222"},
		{"each URL of a list loses its password", "nats://a:hunter2@n1:4222, nats://n2:4222,nats://b:hunter2@n3:4222",
			"nats://a:xxxxx@n1:4222,nats://n2:4222,nats://b:xxxxx@n3:4222"},
		{"a bare host:port stays as it is", "n1:4222,127.0.0.1:4222", "n1:4222,127.0.0.1:4222"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := redactURL(c.in); got != c.want {
				t.Fatalf("redactURL(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}
