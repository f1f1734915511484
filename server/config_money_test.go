package server_test

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/predictkit/predictkit/server"
)

// evmXPub and tronXPub are account 0 of the abandon mnemonic for Ethereum
// and TRON (m/44'/60'/0' and m/44'/195'/0'), as wallets export them.
const (
	evmXPub  = "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt"
	tronXPub = "xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd"
)

func TestMoneyConfig(t *testing.T) {
	watched := map[string]string{
		"PREDICTKIT_WALLET_EVM_XPUB":                  evmXPub,
		"PREDICTKIT_WALLET_TRON_XPUB":                 tronXPub,
		"PREDICTKIT_CHAINS":                           "Ethereum, tron",
		"PREDICTKIT_CHAIN_ETHEREUM_RPC_URL":           "https://eth.example.com/v1/secret-key",
		"PREDICTKIT_CHAIN_ETHEREUM_TOKEN":             "0xdAC17F958D2ee523a2206206994597C13D831ec7",
		"PREDICTKIT_CHAIN_ETHEREUM_KOPECKS_PER_TOKEN": "9000",
		"PREDICTKIT_CHAIN_TRON_RPC_URL":               "http://127.0.0.1:8545/jsonrpc",
		"PREDICTKIT_CHAIN_TRON_TOKEN":                 "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
		"PREDICTKIT_CHAIN_TRON_KOPECKS_PER_TOKEN":     "9000",
		"PREDICTKIT_CHAIN_TRON_CONFIRMATIONS":         "3",
		"PREDICTKIT_WITHDRAWAL_DAILY_LIMIT_KOPECKS":   "500000",
		"PREDICTKIT_CHAIN_TRON_START_BLOCK":           "61000000",
		"PREDICTKIT_CHAIN_TRON_LOG_RANGE":             "100",
		"PREDICTKIT_CHAIN_TRON_POLL":                  "3s",
	}
	load := func(t *testing.T, change map[string]string) (server.Config, error) {
		t.Helper()
		env := map[string]string{}
		for k, v := range watched {
			env[k] = v
		}
		for k, v := range change {
			env[k] = v
		}
		return server.LoadConfig(nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, io.Discard)
	}
	t.Run("two watched chains are read with their defaults and settings", func(t *testing.T) {
		c, err := load(t, nil)
		if err != nil {
			t.Fatal(err)
		}
		eth, tron := c.ChainSettings.Of("ethereum"), c.ChainSettings.Of("tron")
		if strings.Join(c.Chains, ",") != "ethereum,tron" || eth.Decimals != 6 || eth.Confirmations != 12 || eth.KopecksPerToken != 9000 ||
			tron.Confirmations != 3 || tron.Token != "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t" || c.WithdrawalDailyLimitKopecks != 500000 ||
			tron.StartBlock != 61_000_000 || tron.LogRange != 100 || tron.Poll != 3*time.Second ||
			eth.StartBlock != 0 || eth.LogRange != 500 || eth.Poll != 5*time.Second {
			t.Fatalf("config %+v", c)
		}
	})
	for _, tc := range []struct {
		name   string
		change map[string]string
		want   string // in the error
	}{
		{"an extended private key is refused as a wallet key", map[string]string{"PREDICTKIT_WALLET_EVM_XPUB": "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi"}, "PREDICTKIT_WALLET_EVM_XPUB"},
		{"a watched chain needs its family's key", map[string]string{"PREDICTKIT_WALLET_TRON_XPUB": ""}, "PREDICTKIT_WALLET_TRON_XPUB"},
		{"an unknown chain is refused", map[string]string{"PREDICTKIT_CHAINS": "ethereum,solana"}, `"solana"`},
		{"a chain listed twice is refused", map[string]string{"PREDICTKIT_CHAINS": "tron,ethereum,tron"}, "listed twice"},
		{"a watched chain needs a node", map[string]string{"PREDICTKIT_CHAIN_ETHEREUM_RPC_URL": ""}, "PREDICTKIT_CHAIN_ETHEREUM_RPC_URL"},
		{"a token without its checksum is refused", map[string]string{"PREDICTKIT_CHAIN_ETHEREUM_TOKEN": "0xdac17f958d2ee523a2206206994597c13d831ec7"}, "PREDICTKIT_CHAIN_ETHEREUM_TOKEN"},
		{"a TRON token given in hex is refused", map[string]string{"PREDICTKIT_CHAIN_TRON_TOKEN": "0xdAC17F958D2ee523a2206206994597C13D831ec7"}, "PREDICTKIT_CHAIN_TRON_TOKEN"},
		{"a watched chain needs a rate", map[string]string{"PREDICTKIT_CHAIN_TRON_KOPECKS_PER_TOKEN": "0"}, "PREDICTKIT_CHAIN_TRON_KOPECKS_PER_TOKEN"},
		{"no confirmations is refused", map[string]string{"PREDICTKIT_CHAIN_TRON_CONFIRMATIONS": "0"}, "PREDICTKIT_CHAIN_TRON_CONFIRMATIONS"},
		{"a log range of no blocks is refused", map[string]string{"PREDICTKIT_CHAIN_TRON_LOG_RANGE": "0"}, "PREDICTKIT_CHAIN_TRON_LOG_RANGE"},
		{"a negative start block is refused", map[string]string{"PREDICTKIT_CHAIN_ETHEREUM_START_BLOCK": "-5"}, "PREDICTKIT_CHAIN_ETHEREUM_START_BLOCK"},
		{"a poll of an hour is refused", map[string]string{"PREDICTKIT_CHAIN_TRON_POLL": "1h"}, "PREDICTKIT_CHAIN_TRON_POLL"},
		{"a negative daily limit is refused", map[string]string{"PREDICTKIT_WITHDRAWAL_DAILY_LIMIT_KOPECKS": "-1"}, "PREDICTKIT_WITHDRAWAL_DAILY_LIMIT_KOPECKS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.change)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadConfig = %v, want an error about %s", err, tc.want)
			}
			for _, secret := range []string{"secret-key", "xprv9s21", evmXPub} {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("the error repeats a secret: %v", err)
				}
			}
		})
	}
	t.Run("without chains nothing is watched and nothing is required", func(t *testing.T) {
		c, err := server.LoadConfig(nil, func(string) (string, bool) { return "", false }, io.Discard)
		if err != nil || len(c.Chains) != 0 || c.WalletEVMXPub != "" {
			t.Fatalf("LoadConfig = %+v, %v", c, err)
		}
	})
}
