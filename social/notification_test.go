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
		{"a void in English says it refunded", "en", Notification{Type: TypeMarketResolved, Data: NotificationData{Won: "VOID", Amount: 123456, MarketName: "Rain"}},
			"Market voided", `"Rain" was voided and its bets refunded. Your refund: 1,234.56 RUB`},
		{"a void in Russian says it refunded", "ru", Notification{Type: TypeMarketResolved, Data: NotificationData{Won: "VOID", Amount: 0, MarketName: "Дождь"}},
			"Рынок отменён", "Рынок «Дождь» отменён, ставки возвращены. Возврат: 0,00 ₽"},
		{"a resolution in Russian names the winning side", "ru", Notification{Type: TypeMarketResolved, Data: NotificationData{Won: "YES", Amount: 150000, MarketName: "Дождь"}},
			"Рынок закрыт", "Рынок «Дождь» закрыт, победил исход «ДА». Выплата: 1\u00a0500,00 ₽"},
		{"an answer added in English names the answer, the event and Other", "en", Notification{Type: TypeAnswerAdded, Data: NotificationData{EventName: "Mayor", MarketName: "Cid", Other: "Other"}},
			"Answer added", `"Cid" was added to "Mayor", taking its probability from "Other". Your positions pay in every outcome what they paid before.`},
		{"an answer added in Russian", "ru", Notification{Type: TypeAnswerAdded, Data: NotificationData{EventName: "Мэр", MarketName: "Сид", Other: "Другой"}},
			"Новый ответ в событии", "В событие «Мэр» добавлен ответ «Сид»; его вероятность взята из ответа «Другой». Ваши позиции платят в каждом исходе столько же, сколько раньше."},
		{"a deposit credited in English", "en", Notification{Type: TypeDepositCredited, Data: NotificationData{Amount: 112500, Chain: "bsc", TokenAmount: "12.5"}},
			"Deposit credited", "1,125.00 RUB credited for a transfer of 12.5 tokens on BSC."},
		{"a deposit credited in Russian writes the tokens with a comma", "ru", Notification{Type: TypeDepositCredited, Data: NotificationData{Amount: 112500, Chain: "tron", TokenAmount: "12.5"}},
			"Пополнение зачислено", "Зачислено 1\u00a0125,00 ₽ за перевод 12,5 токенов в сети TRON."},
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

func TestDepositCreditedLinksToTheDepositPage(t *testing.T) {
	n := Notification{Type: TypeDepositCredited, RelatedType: RelatedDeposit, RelatedID: 7}
	if got := n.Link(); got != "/deposit" {
		t.Fatalf("link %q; want /deposit", got)
	}
}
