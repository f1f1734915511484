package server_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/predictkit/predictkit/server"
)

func TestStreamNATSSettings(t *testing.T) {
	cases := []struct {
		name     string
		vars     map[string]string
		replicas int      // when it loads
		wants    []string // in the error; none: it loads
	}{
		{"one NATS server loads, with one replica by default", map[string]string{
			"PREDICTKIT_STREAM_NATS_URL": "nats://127.0.0.1:4222",
		}, 1, nil},
		{"the three nodes of a cluster, with three replicas, load", map[string]string{
			"PREDICTKIT_STREAM_NATS_URL":      "nats://user:hunter2@n1:4222, nats://n2:4222,tls://n3:4222",
			"PREDICTKIT_STREAM_NATS_REPLICAS": "3",
		}, 3, nil},
		{"bare host:port entries load, as the NATS client takes them", map[string]string{
			"PREDICTKIT_STREAM_NATS_URL": "n1:4222,n2:4222",
		}, 1, nil},
		{"a list with a URL of another scheme is refused without quoting its password", map[string]string{
			"PREDICTKIT_STREAM_NATS_URL": "nats://n1:4222,http://user:hunter2@n2:4222",
		}, 0, []string{"PREDICTKIT_STREAM_NATS_URL (-stream-nats-url)", "nats://"}},
		{"a list without a URL is refused", map[string]string{
			"PREDICTKIT_STREAM_NATS_URL": " , ",
		}, 0, []string{"PREDICTKIT_STREAM_NATS_URL (-stream-nats-url)", "no URL"}},
		{"websocket and other URLs mixed are refused", map[string]string{
			"PREDICTKIT_STREAM_NATS_URL": "ws://n1:8080,nats://n2:4222",
		}, 0, []string{"PREDICTKIT_STREAM_NATS_URL (-stream-nats-url)", "websocket"}},
		{"more replicas than JetStream keeps are refused", map[string]string{
			"PREDICTKIT_STREAM_NATS_URL":      "nats://n1:4222",
			"PREDICTKIT_STREAM_NATS_REPLICAS": "7",
		}, 0, []string{"PREDICTKIT_STREAM_NATS_REPLICAS (-stream-nats-replicas)", "1 to 5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := server.LoadConfig(nil, env(c.vars), &bytes.Buffer{})
			if c.wants == nil {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.StreamNATSURL != c.vars["PREDICTKIT_STREAM_NATS_URL"] || cfg.StreamNATSReplicas != c.replicas {
					t.Fatalf("loaded %q with %d replicas, want %d", cfg.StreamNATSURL, cfg.StreamNATSReplicas, c.replicas)
				}
				return
			}
			if err == nil {
				t.Fatal("it loads")
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q: %v", w, err)
				}
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error quotes the password: %v", err)
			}
		})
	}
}
