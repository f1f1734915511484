// Package social is the social side of predictkit: comments on events
// with like/dislike reactions, and per-user notifications.
//
// Notifications are written in the same transaction as what they report:
// a trade's trade_executed and a settlement's market_resolved are effects
// of the market's lock → decide → write cycle, so a notification exists
// exactly when its cause does. A notification stores its type and typed
// data; its title and message are rendered when read, in the reader's
// current language (en or ru).
package social

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Notification types.
const (
	TypeTradeExecuted  = "trade_executed"
	TypeMarketResolved = "market_resolved"
	TypeCommentReply   = "comment_reply"
	TypeSupportReply   = "support_reply"
	// TypeAnswerAdded tells a holder of a position in a pool that an
	// answer was added to it, taking part of its Other answer's
	// probability (MarketName the new answer, Other the Other answer).
	TypeAnswerAdded = "answer_added"
	// TypeEventAmended: the creator of an event the user holds a
	// position in added an amendment (Excerpt, ExcerptRu).
	TypeEventAmended = "event_amended"
	// TypeResolutionProposed tells a holder that the creator proposed an
	// outcome (Won) which becomes final at Until unless disputed.
	TypeResolutionProposed = "resolution_proposed"
	// TypeDisputeResolved tells a disputer the operator's outcome (Won)
	// of a proposal (Proposed) and the bond returned (Amount; 0 when the
	// platform kept it).
	TypeDisputeResolved = "dispute_resolved"
	// TypeProposalApproved and TypeProposalRejected tell a proposer the
	// operator's decision on their event proposal: Amount is the ante
	// returned, Excerpt a rejection's reason.
	TypeProposalApproved = "proposal_approved"
	TypeProposalRejected = "proposal_rejected"
	// TypeWithdrawalPaid and TypeWithdrawalRejected tell a user the
	// operator's decision on their withdrawal (RelatedWithdrawal): Amount
	// is the withdrawal's, Excerpt the payout's transaction hash or the
	// rejection's reason, Other the chain.
	TypeWithdrawalPaid     = "withdrawal_paid"
	TypeWithdrawalRejected = "withdrawal_rejected"
	// TypeDepositCredited tells a user that a token deposit (TokenAmount
	// of Chain's token) was credited to their balance as Amount.
	TypeDepositCredited = "deposit_credited"
	// TypeLevelUp tells a user that their lifetime trade volume took
	// them to Level.
	TypeLevelUp = "level_up"
	// TypeReferralReward tells a referrer that a user they invited
	// (Other, by their public name) traded enough to earn them Amount
	// in bonus money.
	TypeReferralReward = "referral_reward"
)

// OutcomeVoid is NotificationData.Won of a market that was voided: every
// position got its net cost back, which Amount holds.
const OutcomeVoid = "VOID"

// What a notification's RelatedID points at.
const (
	RelatedEvent   = "event"
	RelatedComment = "comment"
	RelatedChat    = "chat"
	// RelatedWithdrawal: a withdrawal, shown on the Withdraw page.
	RelatedWithdrawal = "withdrawal"
	// RelatedDeposit: RelatedID is a deposit's id.
	RelatedDeposit = "deposit"
	// RelatedProfile: the reader's own profile page (RelatedID unused).
	RelatedProfile = "profile"
	// RelatedInvite: the reader's Invite friends page (RelatedID unused).
	RelatedInvite = "invite"
)

// Notification is a message to one user about something that happened.
type Notification struct {
	ID          int64
	UserID      int64
	Type        string
	RelatedID   int64
	RelatedType string
	Data        NotificationData
	Read        bool
	CreatedAt   time.Time
}

// NotificationData is what a notification says, kept as data so that it
// can be rendered in the reader's language. Fields a type does not use are
// zero.
type NotificationData struct {
	EventName  string `json:"event_name,omitempty"`
	MarketName string `json:"market_name,omitempty"`
	Side       string `json:"side,omitempty"`   // "YES" or "NO"
	Action     string `json:"action,omitempty"` // "buy" or "sell"
	Shares     int64  `json:"shares,omitempty"`
	Amount     int64  `json:"amount,omitempty"` // kopecks: a trade's charge or payout, a settlement's payout
	Won        string `json:"won,omitempty"`    // how a market resolved: "YES", "NO" or "VOID" (OutcomeVoid)
	Author     string `json:"author,omitempty"` // who replied
	Excerpt    string `json:"excerpt,omitempty"`
	Other      string `json:"other,omitempty"` // an answer_added's Other answer
	// EventNameRu and ExcerptRu are EventName and Excerpt in Russian,
	// when the author gave them (event_amended).
	EventNameRu string `json:"event_name_ru,omitempty"`
	ExcerptRu   string `json:"excerpt_ru,omitempty"`
	Proposed    string `json:"proposed,omitempty"` // a disputed proposal's outcome
	Until       string `json:"until,omitempty"`    // RFC 3339: when a proposed outcome becomes final
	// Following: the reader follows the event and holds no position
	// there (market_resolved, answer_added): told as a follower, not paid.
	Following bool `json:"following,omitempty"`
	// MarketNameRu and OtherRu are MarketName and Other in Russian, when
	// the market has a name_ru: a Russian reader reads no English name.
	MarketNameRu string `json:"market_name_ru,omitempty"`
	OtherRu      string `json:"other_ru,omitempty"`
	// EventID is the event a comment_reply's comments are on, so that
	// the notification links to the comment on the event's page.
	EventID int64 `json:"event_id,omitempty"`
	// Chain and TokenAmount are a deposit_credited's chain and the
	// tokens it brought, as an exact decimal ("12.5").
	Chain       string `json:"chain,omitempty"`
	TokenAmount string `json:"token_amount,omitempty"`
	// Level is the level a level_up reached.
	Level int `json:"level,omitempty"`
}

// Link is where the app shows what n is about: the event's page (for a
// comment_reply, at the reader's comment: #comment-ID, whose replies
// hold the new one), the support chat, or "" when unknown (a
// comment_reply written before it carried its event).
func (n *Notification) Link() string {
	switch {
	case n.RelatedType == RelatedEvent && n.RelatedID > 0:
		return fmt.Sprintf("/events/%d", n.RelatedID)
	case n.RelatedType == RelatedComment && n.Data.EventID > 0:
		return fmt.Sprintf("/events/%d#comment-%d", n.Data.EventID, n.RelatedID)
	case n.RelatedType == RelatedChat:
		return "/chat"
	case n.RelatedType == RelatedWithdrawal:
		return "/withdraw"
	case n.RelatedType == RelatedDeposit:
		return "/deposit"
	case n.RelatedType == RelatedProfile:
		return "/profile"
	case n.RelatedType == RelatedInvite:
		return "/invite"
	}
	return ""
}

// Render returns n's title and message in lang ("ru" or, by default, "en").
func (n *Notification) Render(lang string) (title, message string) {
	d := n.Data
	ru := lang == "ru"
	if ru {
		// Names in Russian where the market has them.
		d.MarketName, d.Other = orDefault(d.MarketNameRu, d.MarketName), orDefault(d.OtherRu, d.Other)
		d.EventName = orDefault(d.EventNameRu, d.EventName)
	}
	switch n.Type {
	case TypeTradeExecuted:
		if ru {
			verb := "Куплено"
			if d.Action == "sell" {
				verb = "Продано"
			}
			return "Сделка исполнена", fmt.Sprintf("%s %s акций «%s» на рынке «%s» за %s", verb, groupDigitsSep(d.Shares, "\u00a0"), sideRu(d.Side), d.MarketName, rub(d.Amount, true))
		}
		verb := "Bought"
		if d.Action == "sell" {
			verb = "Sold"
		}
		return "Trade executed", fmt.Sprintf("%s %s %s shares of %q for %s", verb, groupDigits(d.Shares), d.Side, d.MarketName, rub(d.Amount, false))
	case TypeMarketResolved:
		if d.Following {
			return followedResolution(d, ru)
		}
		if d.Won == OutcomeVoid {
			if ru {
				return "Рынок отменён", fmt.Sprintf("Рынок «%s» отменён, ставки возвращены. Возврат: %s", d.MarketName, rub(d.Amount, true))
			}
			return "Market voided", fmt.Sprintf("%q was voided and its bets refunded. Your refund: %s", d.MarketName, rub(d.Amount, false))
		}
		if ru {
			return "Рынок закрыт", fmt.Sprintf("Рынок «%s» закрыт, победил исход «%s». Выплата: %s", d.MarketName, sideRu(d.Won), rub(d.Amount, true))
		}
		return "Market resolved", fmt.Sprintf("%q resolved %s. Your payout: %s", d.MarketName, d.Won, rub(d.Amount, false))
	case TypeCommentReply:
		if ru {
			return "Новый ответ", fmt.Sprintf("%s ответил(а) на ваш комментарий: %s", d.Author, d.Excerpt)
		}
		return "New reply", fmt.Sprintf("%s replied to your comment: %s", d.Author, d.Excerpt)
	case TypeAnswerAdded:
		if d.Following {
			if ru {
				return "Новый ответ в событии", fmt.Sprintf("В событие «%s», за которым вы следите, добавлен ответ «%s»; его вероятность взята из ответа «%s».", d.EventName, d.MarketName, d.Other)
			}
			return "Answer added", fmt.Sprintf("%q was added to %q, an event you follow, taking its probability from %q.", d.MarketName, d.EventName, d.Other)
		}
		if ru {
			return "Новый ответ в событии", fmt.Sprintf("В событие «%s» добавлен ответ «%s»; его вероятность взята из ответа «%s». Ваши позиции платят в каждом исходе столько же, сколько раньше.", d.EventName, d.MarketName, d.Other)
		}
		return "Answer added", fmt.Sprintf("%q was added to %q, taking its probability from %q. Your positions pay in every outcome what they paid before.", d.MarketName, d.EventName, d.Other)
	case TypeEventAmended:
		if ru {
			return "Уточнение условий", fmt.Sprintf("«%s»: %s", orDefault(d.EventNameRu, d.EventName), orDefault(d.ExcerptRu, d.Excerpt))
		}
		return "Event amended", fmt.Sprintf("%q: %s", d.EventName, d.Excerpt)
	case TypeResolutionProposed:
		if ru {
			return "Предложен исход", fmt.Sprintf("Создатель предлагает закрыть рынок «%s» исходом «%s». Исход станет окончательным %s, если его не оспорят.", d.MarketName, outcomeRu(d.Won), d.Until)
		}
		return "Outcome proposed", fmt.Sprintf("The creator proposes that %q resolves %s. It becomes final at %s unless disputed.", d.MarketName, d.Won, d.Until)
	case TypeDisputeResolved:
		if d.Amount > 0 {
			if ru {
				return "Спор решён", fmt.Sprintf("Оператор закрыл рынок «%s» исходом «%s» вместо предложенного «%s». Залог возвращён: %s", d.MarketName, outcomeRu(d.Won), outcomeRu(d.Proposed), rub(d.Amount, true))
			}
			return "Dispute upheld", fmt.Sprintf("The operator resolved %q %s instead of the proposed %s. Your bond is back: %s", d.MarketName, d.Won, d.Proposed, rub(d.Amount, false))
		}
		if ru {
			return "Спор отклонён", fmt.Sprintf("Оператор подтвердил исход «%s» рынка «%s». Залог остаётся платформе.", outcomeRu(d.Won), d.MarketName)
		}
		return "Dispute rejected", fmt.Sprintf("The operator confirmed %s for %q. The platform keeps your bond.", d.Won, d.MarketName)
	case TypeProposalApproved:
		if ru {
			return "Предложение одобрено", fmt.Sprintf("Ваше событие «%s» одобрено и опубликовано. Залог возвращён: %s", d.EventName, rub(d.Amount, true))
		}
		return "Proposal approved", fmt.Sprintf("Your event %q was approved and published. Your ante came back: %s", d.EventName, rub(d.Amount, false))
	case TypeProposalRejected:
		if ru {
			back := "Залог не возвращён."
			if d.Amount > 0 {
				back = "Залог возвращён: " + rub(d.Amount, true) + "."
			}
			return "Предложение отклонено", fmt.Sprintf("Ваше событие «%s» отклонено: %s. %s", d.EventName, d.Excerpt, back)
		}
		back := "The ante was kept."
		if d.Amount > 0 {
			back = "Your ante came back: " + rub(d.Amount, false) + "."
		}
		return "Proposal rejected", fmt.Sprintf("Your event %q was rejected: %s. %s", d.EventName, d.Excerpt, back)
	case TypeWithdrawalPaid:
		if ru {
			return "Вывод выполнен", fmt.Sprintf("Вывод %s в сети %s отправлен, транзакция %s", rub(d.Amount, true), d.Other, d.Excerpt)
		}
		return "Withdrawal paid", fmt.Sprintf("Your withdrawal of %s on %s was paid in transaction %s", rub(d.Amount, false), d.Other, d.Excerpt)
	case TypeWithdrawalRejected:
		if ru {
			return "Вывод отклонён", fmt.Sprintf("Вывод %s в сети %s отклонён: %s. Сумма возвращена на баланс.", rub(d.Amount, true), d.Other, d.Excerpt)
		}
		return "Withdrawal rejected", fmt.Sprintf("Your withdrawal of %s on %s was rejected: %s. The amount is back in your balance.", rub(d.Amount, false), d.Other, d.Excerpt)
	case TypeDepositCredited:
		if ru {
			return "Пополнение зачислено", fmt.Sprintf("Зачислено %s за перевод %s токенов в сети %s.", rub(d.Amount, true), strings.Replace(d.TokenAmount, ".", ",", 1), chainName(d.Chain))
		}
		return "Deposit credited", fmt.Sprintf("%s credited for a transfer of %s tokens on %s.", rub(d.Amount, false), d.TokenAmount, chainName(d.Chain))
	case TypeLevelUp:
		if ru {
			return "Новый уровень", fmt.Sprintf("Ваш оборот торгов вырос: теперь у вас уровень %d.", d.Level)
		}
		return "Level up", fmt.Sprintf("Your trading volume took you to level %d.", d.Level)
	case TypeReferralReward:
		if ru {
			return "Бонус за приглашение", fmt.Sprintf("%s, приглашённый(ая) вами, наторговал(а) достаточно: на ваш бонусный баланс зачислено %s.", d.Other, rub(d.Amount, true))
		}
		return "Referral reward", fmt.Sprintf("%s, whom you invited, has traded enough: %s was added to your bonus balance.", d.Other, rub(d.Amount, false))
	case TypeSupportReply:
		if ru {
			return "Ответ поддержки", d.Excerpt
		}
		return "Support replied", d.Excerpt
	}
	return n.Type, ""
}

// followedResolution renders a market_resolved told to a follower who
// held nothing on the market: no payout to speak of.
func followedResolution(d NotificationData, ru bool) (title, message string) {
	if d.Won == OutcomeVoid {
		if ru {
			return "Рынок отменён", fmt.Sprintf("Рынок «%s» в событии, за которым вы следите, отменён, ставки возвращены.", d.MarketName)
		}
		return "Market voided", fmt.Sprintf("%q, in an event you follow, was voided and its bets refunded.", d.MarketName)
	}
	if ru {
		return "Рынок закрыт", fmt.Sprintf("Рынок «%s» в событии, за которым вы следите, закрыт: победил исход «%s».", d.MarketName, sideRu(d.Won))
	}
	return "Market resolved", fmt.Sprintf("%q, in an event you follow, resolved %s.", d.MarketName, d.Won)
}

// chainName is how a chain is written in a sentence.
func chainName(chain string) string {
	switch chain {
	case "ethereum":
		return "Ethereum"
	case "bsc":
		return "BSC"
	case "polygon":
		return "Polygon"
	case "tron":
		return "TRON"
	}
	return chain
}

// orDefault is s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// outcomeRu is an outcome ("YES", "NO", "VOID") in Russian.
func outcomeRu(s string) string {
	if s == OutcomeVoid {
		return "ОТМЕНА"
	}
	return sideRu(s)
}

func sideRu(s string) string {
	switch s {
	case "YES":
		return "ДА"
	case "NO":
		return "НЕТ"
	}
	return s
}

// rub formats kopecks as roubles: "1,234.50 RUB" or "1 234,50 ₽".
func rub(k int64, ru bool) string {
	sign := ""
	if k < 0 {
		sign, k = "-", -k
	}
	if ru {
		return fmt.Sprintf("%s%s,%02d ₽", sign, groupDigitsSep(k/100, "\u00a0"), k%100)
	}
	return fmt.Sprintf("%s%s.%02d RUB", sign, groupDigitsSep(k/100, ","), k%100)
}

func groupDigits(n int64) string { return groupDigitsSep(n, ",") }

func groupDigitsSep(n int64, sep string) string {
	s := fmt.Sprint(n)
	if len(s) <= 3 {
		return s
	}
	out := s[:len(s)%3]
	for i := len(s) % 3; i < len(s); i += 3 {
		if out != "" {
			out += sep
		}
		out += s[i : i+3]
	}
	return out
}

// NotificationStore keeps notifications. Implementations: storage/memory
// and storage/postgres. (Notifications of trades and settlements are
// written by market.Store.Exec itself, in the trade's transaction.)
type NotificationStore interface {
	// CreateNotification stores n and sets its ID and CreatedAt.
	CreateNotification(ctx context.Context, n *Notification) error
	// Notifications returns user id's notifications, newest first (ties by
	// id, descending); only unread ones when unreadOnly.
	Notifications(ctx context.Context, userID int64, unreadOnly bool, limit, offset int) ([]*Notification, error)
	// MarkRead marks notification id of user id read. ErrNotificationNotFound
	// if there is no such notification of that user.
	MarkRead(ctx context.Context, userID, id int64) error
	// MarkAllRead marks every notification of user id read and returns how
	// many changed.
	MarkAllRead(ctx context.Context, userID int64) (int64, error)
}
