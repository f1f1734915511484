package social

import "testing"

func TestRender(t *testing.T) {
	cases := []struct {
		name, lang     string
		n              Notification
		title, message string
	}{
		{"a buy in English", "en", Notification{Type: TypeTradeExecuted, Data: NotificationData{Action: "buy", Side: "YES", Shares: 22911, Amount: 10000, MarketName: "Rain"}},
			"Trade executed", `Bought 22,911 YES shares of "Rain" for 100.00 RUB`},
		{"a sale in Russian", "ru", Notification{Type: TypeTradeExecuted, Data: NotificationData{Action: "sell", Side: "NO", Shares: 500, Amount: 123456, MarketName: "Дождь"}},
			"Сделка исполнена", "Продано 500 акций «НЕТ» на рынке «Дождь» за 1\u00a0234,56 ₽"},
		{"a large buy in Russian groups digits with no-break spaces", "ru", Notification{Type: TypeTradeExecuted, Data: NotificationData{Action: "buy", Side: "YES", Shares: 22911, Amount: 10000, MarketName: "Дождь"}},
			"Сделка исполнена", "Куплено 22\u00a0911 акций «ДА» на рынке «Дождь» за 100,00 ₽"},
		{"a resolution in English", "en", Notification{Type: TypeMarketResolved, Data: NotificationData{Won: "NO", Amount: 5, MarketName: "Rain"}},
			"Market resolved", `"Rain" resolved NO. Your payout: 0.05 RUB`},
		{"a reply in an unknown language falls back to English", "de", Notification{Type: TypeCommentReply, Data: NotificationData{Author: "Ann", Excerpt: "agreed"}},
			"New reply", "Ann replied to your comment: agreed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			title, msg := c.n.Render(c.lang)
			if title != c.title || msg != c.message {
				t.Fatalf("got %q / %q\nwant %q / %q", title, msg, c.title, c.message)
			}
		})
	}
}
