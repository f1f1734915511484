package telegram

// What the bot says in a chat besides notifications (whose texts are
// social.Notification.Render's), in English and Russian.
const (
	msgLinked = iota
	msgInvalidToken
	msgHowToLink
)

var texts = map[string][3]string{
	"en": {
		msgLinked:       "Your predictkit account %s is linked to this chat. Notifications will come here; turn them off or unlink on your profile page.",
		msgInvalidToken: "This link is unknown, used or expired. Open your profile page and press Link Telegram again.",
		msgHowToLink:    "To get your predictkit notifications here, open your profile page and press Link Telegram.",
	},
	"ru": {
		msgLinked:       "Ваш аккаунт predictkit %s привязан к этому чату. Уведомления будут приходить сюда; отключить их или отвязать чат можно на странице профиля.",
		msgInvalidToken: "Ссылка неизвестна, уже использована или устарела. Откройте страницу профиля и снова нажмите «Привязать Telegram».",
		msgHowToLink:    "Чтобы получать уведомления predictkit здесь, откройте страницу профиля и нажмите «Привязать Telegram».",
	},
}

// text is message m in lang, English unless lang is "ru".
func text(lang string, m int) string {
	if t, ok := texts[lang]; ok {
		return t[m]
	}
	return texts["en"][m]
}
