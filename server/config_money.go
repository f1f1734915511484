package server

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/deposit"
	"github.com/predictkit/predictkit/wallet"
)

// ChainConfig is how one chain's token deposits are watched and valued.
type ChainConfig struct {
	// RPCURL is the JSON-RPC endpoint of a node of the chain (http, https,
	// ws or wss). It may carry a provider's API key, so it is secret.
	RPCURL string
	// Token is the token contract's address, in the chain's own form
	// (EIP-55 hex, or TRON base58check).
	Token string
	// Decimals is the token's decimals: one token is 10^Decimals units.
	Decimals int
	// Confirmations is how many blocks, the transfer's own included, must
	// be on the chain before a deposit is credited.
	Confirmations int
	// KopecksPerToken is the operator's rate: what one whole token is
	// credited as.
	KopecksPerToken int64
	// StartBlock is the first block read on a chain the server has never
	// read (0: the blocks still short of their confirmations at the head
	// then); it matters once, when a chain is first watched.
	StartBlock int64
	// LogRange is the most blocks one eth_getLogs asks for (nodes and
	// providers refuse wide ranges, some past a few thousand blocks);
	// Poll is the pause between looks once the watcher has caught up.
	LogRange int64
	Poll     time.Duration
}

// ChainSettings holds the settings of every chain predictkit knows,
// whether watched or not (Config.Chains says which are).
type ChainSettings struct {
	Ethereum, BSC, Polygon, Tron ChainConfig
}

// Of returns the settings of chain name, or nil for a chain predictkit
// does not know.
func (s *ChainSettings) Of(name string) *ChainConfig {
	switch name {
	case wallet.Ethereum:
		return &s.Ethereum
	case wallet.BSC:
		return &s.BSC
	case wallet.Polygon:
		return &s.Polygon
	case wallet.TRON:
		return &s.Tron
	}
	return nil
}

// defaultChainSettings are the decimals of USDT on each chain and
// confirmation counts past which a reorganisation is unheard of in
// practice; the RPC URL, the token and the rate are the operator's to set.
func defaultChainSettings() ChainSettings {
	return ChainSettings{
		Ethereum: ChainConfig{Decimals: 6, Confirmations: 12, LogRange: deposit.DefaultMaxRange, Poll: deposit.DefaultPoll},
		BSC:      ChainConfig{Decimals: 18, Confirmations: 15, LogRange: deposit.DefaultMaxRange, Poll: deposit.DefaultPoll},
		Polygon:  ChainConfig{Decimals: 6, Confirmations: 128, LogRange: deposit.DefaultMaxRange, Poll: deposit.DefaultPoll},
		Tron:     ChainConfig{Decimals: 6, Confirmations: 20, LogRange: deposit.DefaultMaxRange, Poll: deposit.DefaultPoll},
	}
}

// DefaultWithdrawalDailyLimitKopecks is the default
// Config.WithdrawalDailyLimitKopecks: 100,000 RUB a user in 24 hours, so
// that a stolen session empties no large account before the operator,
// who approves every withdrawal, notices.
const DefaultWithdrawalDailyLimitKopecks = 10_000_000

// The bounds of the chains' settings: far past any real token or chain.
const (
	maxTokenDecimals   = 36
	maxConfirmations   = 100_000
	maxKopecksPerToken = 1_000_000_000_000
	maxStartBlock      = 1 << 53
	maxLogRange        = 1_000_000
	maxPoll            = 10 * time.Minute
)

// moneySettings are the settings of money in and out: the wallets'
// extended public keys, the chains and each chain's five settings.
func moneySettings() []setting {
	ss := []setting{
		secretSetting(stringSetting("wallet-evm-xpub", "PREDICTKIT_WALLET_EVM_XPUB", "extended public key (xpub) users' Ethereum, BSC and Polygon deposit addresses are derived from, at <xpub>/0/<user id>; empty: no EVM addresses", func(c *Config) *string { return &c.WalletEVMXPub })),
		secretSetting(stringSetting("wallet-tron-xpub", "PREDICTKIT_WALLET_TRON_XPUB", "extended public key (xpub) users' TRON deposit addresses are derived from, at <xpub>/0/<user id>; empty: no TRON addresses", func(c *Config) *string { return &c.WalletTronXPub })),
		{flag: "chains", env: "PREDICTKIT_CHAINS", help: "comma-separated chains whose token deposits are watched and credited: ethereum, bsc, polygon, tron (each needs its PREDICTKIT_CHAIN_<NAME>_* settings); empty: none",
			get: func(c *Config) string { return strings.Join(c.Chains, ",") },
			set: func(c *Config, v string) error {
				c.Chains = splitList(strings.ToLower(v))
				return nil
			}},
		int64Setting("withdrawal-daily-limit-kopecks", "PREDICTKIT_WITHDRAWAL_DAILY_LIMIT_KOPECKS", "most kopecks one user may ask to withdraw in 24 hours; past it a withdrawal is 409 withdrawal_limit (0: no limit)",
			0, account.MaxCredit, func(c *Config) *int64 { return &c.WithdrawalDailyLimitKopecks }),
	}
	for _, name := range []string{wallet.Ethereum, wallet.BSC, wallet.Polygon, wallet.TRON} {
		of := func(c *Config) *ChainConfig { return c.ChainSettings.Of(name) }
		up, flag := strings.ToUpper(name), "chain-"+name
		ss = append(ss,
			secretSetting(stringSetting(flag+"-rpc-url", "PREDICTKIT_CHAIN_"+up+"_RPC_URL", "JSON-RPC URL of a "+name+" node the deposits are read from (http, https, ws or wss)", func(c *Config) *string { return &of(c).RPCURL })),
			stringSetting(flag+"-token", "PREDICTKIT_CHAIN_"+up+"_TOKEN", "address of the token contract whose transfers to users' "+name+" addresses are deposits", func(c *Config) *string { return &of(c).Token }),
			intSetting(flag+"-decimals", "PREDICTKIT_CHAIN_"+up+"_DECIMALS", "decimals of the "+name+" token: one token is 10^decimals units", 0, maxTokenDecimals, func(c *Config) *int { return &of(c).Decimals }),
			intSetting(flag+"-confirmations", "PREDICTKIT_CHAIN_"+up+"_CONFIRMATIONS", "blocks (the transfer's own included) a "+name+" deposit waits for before it is credited", 1, maxConfirmations, func(c *Config) *int { return &of(c).Confirmations }),
			int64Setting(flag+"-kopecks-per-token", "PREDICTKIT_CHAIN_"+up+"_KOPECKS_PER_TOKEN", "kopecks one whole "+name+" token is credited as (the operator's rate)", 0, maxKopecksPerToken, func(c *Config) *int64 { return &of(c).KopecksPerToken }),
			int64Setting(flag+"-start-block", "PREDICTKIT_CHAIN_"+up+"_START_BLOCK", "first "+name+" block read when the chain is first watched (0: the blocks still short of their confirmations then); later starts go on from where the watcher stopped", 0, maxStartBlock, func(c *Config) *int64 { return &of(c).StartBlock }),
			int64Setting(flag+"-log-range", "PREDICTKIT_CHAIN_"+up+"_LOG_RANGE", "most "+name+" blocks one eth_getLogs asks for (lower it for a provider that refuses wide ranges)", 1, maxLogRange, func(c *Config) *int64 { return &of(c).LogRange }),
			optionalDurationSetting(flag+"-poll", "PREDICTKIT_CHAIN_"+up+"_POLL", "pause between looks at the "+name+" head once the watcher has caught up", time.Millisecond*100, maxPoll, "must be a duration from 100ms to 10m, such as 5s", func(c *Config) *time.Duration { return &of(c).Poll }),
		)
	}
	return ss
}

func secretSetting(s setting) setting { s.secret = true; return s }

// validateMoney checks the wallets and every watched chain.
func (c Config) validateMoney() []error {
	var errs []error
	bad := func(env, format string, args ...any) {
		errs = append(errs, settingError(env, fmt.Sprintf(format, args...)))
	}
	xpubs := map[wallet.Family]string{wallet.EVM: c.WalletEVMXPub, wallet.Tron: c.WalletTronXPub}
	envs := map[wallet.Family]string{wallet.EVM: "PREDICTKIT_WALLET_EVM_XPUB", wallet.Tron: "PREDICTKIT_WALLET_TRON_XPUB"}
	for _, f := range []wallet.Family{wallet.EVM, wallet.Tron} {
		if xpubs[f] == "" {
			continue
		}
		if _, err := wallet.NewDeriver(f, xpubs[f]); err != nil {
			if errors.Is(err, wallet.ErrPrivateKey) {
				bad(envs[f], "is an extended private key: give the extended public key (xpub); the server must never hold a private key")
			} else {
				bad(envs[f], "must be an extended public key (xpub...)")
			}
		}
	}
	for i, name := range c.Chains {
		env := "PREDICTKIT_CHAIN_" + strings.ToUpper(name)
		cc := c.ChainSettings.Of(name)
		family, _ := wallet.FamilyOf(name)
		switch {
		case cc == nil:
			bad("PREDICTKIT_CHAINS", "%q: must be ethereum, bsc, polygon or tron", name)
			continue
		case slices.Contains(c.Chains[:i], name):
			bad("PREDICTKIT_CHAINS", "%q is listed twice", name)
			continue
		case xpubs[family] == "":
			bad(envs[family], "must be set to watch %s: users have no %s addresses without it", name, name)
		}
		if u, err := url.Parse(cc.RPCURL); cc.RPCURL == "" || err != nil || u.Host == "" ||
			!slices.Contains([]string{"http", "https", "ws", "wss"}, u.Scheme) {
			bad(env+"_RPC_URL", "must be the http(s) or ws(s) URL of a %s node's JSON-RPC", name)
		}
		if _, err := wallet.Parse(name, cc.Token); err != nil {
			bad(env+"_TOKEN", "%q: must be the token contract's %s address (%v)", cc.Token, name, errors.Unwrap(err))
		}
		if cc.Decimals < 0 || cc.Decimals > maxTokenDecimals {
			bad(env+"_DECIMALS", "%d: must be 0 to %d", cc.Decimals, maxTokenDecimals)
		}
		if cc.Confirmations < 1 || cc.Confirmations > maxConfirmations {
			bad(env+"_CONFIRMATIONS", "%d: must be 1 to %d", cc.Confirmations, maxConfirmations)
		}
		if cc.KopecksPerToken < 1 || cc.KopecksPerToken > maxKopecksPerToken {
			bad(env+"_KOPECKS_PER_TOKEN", "%s: must be set to the rate, 1 to %d kopecks a token", strconv.FormatInt(cc.KopecksPerToken, 10), int64(maxKopecksPerToken))
		}
	}
	if c.WithdrawalDailyLimitKopecks < 0 || c.WithdrawalDailyLimitKopecks > account.MaxCredit {
		bad("PREDICTKIT_WITHDRAWAL_DAILY_LIMIT_KOPECKS", "%d: must be 0 (no limit) to %d", c.WithdrawalDailyLimitKopecks, int64(account.MaxCredit))
	}
	return errs
}
