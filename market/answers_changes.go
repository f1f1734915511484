package market

import (
	"github.com/predictkit/predictkit/changelog"
	"github.com/predictkit/predictkit/social"
)

// answerData is the data of an answer_added entry: the new market, the
// Other market it took its probability from, and what the treasury added
// to the pool's escrow.
type answerData struct {
	MarketID       int64   `json:"market_id"`
	PoolID         int64   `json:"pool_id"`
	EventID        int64   `json:"event_id"`
	Name           string  `json:"name"`
	NameRu         string  `json:"name_ru"`
	OutcomeIndex   int     `json:"outcome_index"`
	OtherMarketID  int64   `json:"other_market_id"`
	YesProbability float64 `json:"yes_probability"`
	TopUpKopecks   int64   `json:"top_up_kopecks"`
	CreatedAt      string  `json:"created_at"`
}

// AnswerChanges returns the change log's entries of an answer added as
// eff says (the notifications' ids set): the public answer_added entry,
// a price entry for every market of the pool (the new one last; their
// trade_id is 0), then the holders' notifications. Every price but
// Other's and the new answer's moves by rounding only.
func AnswerChanges(eff *AnswerEffects) []changelog.Entry {
	nm := eff.Market
	prices := eff.Split.Pool.Prices()
	price := func(i int) float64 {
		if i < len(prices) {
			return prices[i]
		}
		return 0
	}
	var other int64
	for _, m := range eff.Markets {
		if m.Other {
			other = m.ID
		}
	}
	at := nm.CreatedAt
	es := []changelog.Entry{{Type: changelog.AnswerAdded, EventID: nm.EventID, PoolID: nm.PoolID, MarketID: nm.ID, At: at,
		Data: marshal(answerData{MarketID: nm.ID, PoolID: nm.PoolID, EventID: nm.EventID, Name: nm.Name, NameRu: nm.NameRu,
			OutcomeIndex: nm.OutcomeIndex, OtherMarketID: other, YesProbability: price(len(eff.Markets)),
			TopUpKopecks: eff.TopUp(), CreatedAt: changeTime(at)})}}
	for i, m := range append(eff.Markets[:len(eff.Markets):len(eff.Markets)], nm) {
		es = append(es, changelog.Entry{Type: changelog.Price, EventID: m.EventID, PoolID: m.PoolID, MarketID: m.ID, At: at,
			Data: marshal(priceData{MarketID: m.ID, PoolID: m.PoolID, EventID: m.EventID, YesProbability: price(i),
				QYes: m.QYes, QNo: m.QNo, At: changeTime(at)})})
	}
	for i := range eff.Notifications {
		es = append(es, social.NotificationChange(&eff.Notifications[i]))
	}
	return es
}
