package server

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/growth"
)

// DefaultTelegramAPIURL is the public Bot API; tests and self-hosted Bot
// API servers give another base URL, and nothing else differs.
const DefaultTelegramAPIURL = "https://api.telegram.org"

// telegramSecretPattern is what Telegram accepts as a webhook's secret
// token (setWebhook's secret_token): 1 to 256 of A-Z, a-z, 0-9, _ and -.
var telegramSecretPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{16,256}$`)

// growthSettings are the settings of referrals, levels, the sign-up
// bonus and the Telegram bot (docs/referrals-and-levels.md,
// docs/telegram.md).
func growthSettings() []setting {
	return []setting{
		int64Setting("referral-qualify-kopecks", "PREDICTKIT_REFERRAL_QUALIFY_KOPECKS", "lifetime trade volume, in kopecks, at which a referred user earns the referrer the reward",
			1, account.MaxCredit, func(c *Config) *int64 { return &c.Growth.QualifyKopecks }),
		int64Setting("referral-reward-kopecks", "PREDICTKIT_REFERRAL_REWARD_KOPECKS", "bonus money, in kopecks, a referrer gets once per referred user who qualifies (0: no reward)",
			0, account.MaxCredit, func(c *Config) *int64 { return &c.Growth.RewardKopecks }),
		{flag: "levels", env: "PREDICTKIT_LEVELS", help: "comma-separated ascending lifetime trade volumes, in kopecks, at which levels 1, 2, ... start (the first is 0)",
			get: func(c *Config) string {
				s := make([]string, len(c.Growth.Levels))
				for i, v := range c.Growth.Levels {
					s[i] = fmt.Sprint(v)
				}
				return strings.Join(s, ",")
			},
			set: func(c *Config, v string) error {
				levels, err := growth.ParseLevels(v)
				if err != nil {
					return err
				}
				c.Growth.Levels = levels
				return nil
			}},
		int64Setting("signup-bonus-kopecks", "PREDICTKIT_SIGNUP_BONUS_KOPECKS", "bonus money, in kopecks, credited to every new user (0: none; a play-money platform sets it)",
			0, account.MaxCredit, func(c *Config) *int64 { return &c.Growth.SignupBonusKopecks }),
		secretSetting(stringSetting("telegram-bot-token", "PREDICTKIT_TELEGRAM_BOT_TOKEN", "token of the Telegram bot users link their accounts to (from @BotFather); empty: no Telegram", func(c *Config) *string { return &c.TelegramBotToken })),
		stringSetting("telegram-api-url", "PREDICTKIT_TELEGRAM_API_URL", "base URL of the Telegram Bot API (a self-hosted Bot API server, or a test server)", func(c *Config) *string { return &c.TelegramAPIURL }),
		secretSetting(stringSetting("telegram-webhook-secret", "PREDICTKIT_TELEGRAM_WEBHOOK_SECRET", "secret of the bot's webhook: its path /api/v1/telegram/webhook/<secret> and Telegram's X-Telegram-Bot-Api-Secret-Token header (16 to 256 of A-Z a-z 0-9 _ -)", func(c *Config) *string { return &c.TelegramWebhookSecret })),
	}
}

// validateGrowth checks the growth rules and the Telegram settings.
func (c Config) validateGrowth() []error {
	var errs []error
	bad := func(env, format string, args ...any) {
		errs = append(errs, settingError(env, fmt.Sprintf(format, args...)))
	}
	c = c.withDefaults() // what is left zero in a Config built in code is the default
	if err := growth.CheckLevels(c.Growth.Levels); err != nil {
		bad("PREDICTKIT_LEVELS", "%v", err)
	}
	if c.Growth.QualifyKopecks < 1 || c.Growth.QualifyKopecks > account.MaxCredit {
		bad("PREDICTKIT_REFERRAL_QUALIFY_KOPECKS", "%d: must be 1 to %d", c.Growth.QualifyKopecks, int64(account.MaxCredit))
	}
	if c.Growth.RewardKopecks < 0 || c.Growth.RewardKopecks > account.MaxCredit {
		bad("PREDICTKIT_REFERRAL_REWARD_KOPECKS", "%d: must be 0 to %d", c.Growth.RewardKopecks, int64(account.MaxCredit))
	}
	if c.Growth.SignupBonusKopecks < 0 || c.Growth.SignupBonusKopecks > account.MaxCredit {
		bad("PREDICTKIT_SIGNUP_BONUS_KOPECKS", "%d: must be 0 to %d", c.Growth.SignupBonusKopecks, int64(account.MaxCredit))
	}
	if c.TelegramBotToken == "" {
		return errs
	}
	if u, err := url.Parse(c.TelegramAPIURL); err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" {
		bad("PREDICTKIT_TELEGRAM_API_URL", "must be the http(s) base URL of a Bot API server, such as %s", DefaultTelegramAPIURL)
	}
	if !telegramSecretPattern.MatchString(c.TelegramWebhookSecret) {
		bad("PREDICTKIT_TELEGRAM_WEBHOOK_SECRET", "must be set with the bot's token: 16 to 256 of A-Z a-z 0-9 _ - (Telegram sends it back in X-Telegram-Bot-Api-Secret-Token)")
	}
	return errs
}
