package server

import (
	"time"

	"github.com/predictkit/predictkit/market"
)

// The demo platform's data, which SeedDemoPlatform (demo_history.go)
// records as history. Every event is named, and its rules written, in
// English and in Russian. Times are relative to the moment the demo
// starts.

// demoPerson is a demo user SeedDemoPlatform registers (password
// DemoPassword) and credits with deposit kopecks.
type demoPerson struct {
	email, name, nickname, language string
	deposit                         int64
	creator                         bool
}

var demoPeople = []demoPerson{
	{email: DemoMariaEmail, name: "Maria Ivanova", nickname: "masha_forecasts", language: "en", deposit: 5_000_000},
	{email: "dmitry@demo.predictkit", name: "Dmitry Orlov", nickname: "dorlov", language: "ru", deposit: 4_000_000},
	{email: "sam@demo.predictkit", name: "Sam Carter", nickname: "samc", language: "en", deposit: 4_000_000},
	{email: "priya@demo.predictkit", name: "Priya Nair", nickname: "priya_n", language: "en", deposit: 4_000_000},
	{email: "kenji@demo.predictkit", name: "Kenji Watanabe", nickname: "kenji_w", language: "en", deposit: 4_000_000},
	{email: "olga@demo.predictkit", name: "Olga Petrova", nickname: "olga_p", language: "ru", deposit: 4_000_000},
	{email: "lucas@demo.predictkit", name: "Lucas Moreau", nickname: "lucasm", language: "en", deposit: 4_000_000},
	{email: "elena@demo.predictkit", name: "Elena Sokolova", nickname: "elena_desk", language: "ru", deposit: 200_000, creator: true},
}

// demoTraders are the e-mails of the people who trade in the history
// (Maria a little more often than the others).
var demoTraders = []string{
	DemoMariaEmail, DemoMariaEmail, "dmitry@demo.predictkit", "sam@demo.predictkit", "priya@demo.predictkit",
	"kenji@demo.predictkit", "olga@demo.predictkit", "lucas@demo.predictkit",
}

// demoTags are added to the original demo's football and finals.
var demoTags = []market.Tag{
	{Slug: "politics", Name: "Politics", NameRu: "Политика"},
	{Slug: "economy", Name: "Economy", NameRu: "Экономика"},
	{Slug: "crypto", Name: "Crypto", NameRu: "Криптовалюты"},
	{Slug: "science", Name: "Science & tech", NameRu: "Наука и технологии"},
	{Slug: "culture", Name: "Culture", NameRu: "Культура"},
	{Slug: "sport", Name: "Sport", NameRu: "Спорт"},
}

// demoEvent is an event of the history.
type demoEvent struct {
	event market.NewEvent
	// creator is the e-mail of the creator who publishes it.
	creator string
	// created is how long before the demo starts it was published;
	// closesIn when its pools stop trading, from the start (negative:
	// in the past).
	created, closesIn time.Duration
	// ends are, pool by pool and market by market, the YES probability
	// its trades head for by the start (from each market's opening one).
	ends [][]float64
	// trades is how many trades move each market (each exclusive pool:
	// twice as many).
	trades int
	// cup marks the exclusive pool answered as one question.
	cup      bool
	comments []demoComment
	settle   *demoSettlement
}

// demoComment is a comment posted ago before the start; replyTo, when
// not 0, is the 1-based index of the event's comment it answers.
type demoComment struct {
	by      string
	ago     time.Duration
	text    string
	replyTo int
}

// demoSettlement ends an event's first market ago before the start: by
// its creator, or by the operator, with outcome YES, NO or VOID, after an
// amendment when one is given.
type demoSettlement struct {
	ago                    time.Duration
	outcome                string
	operator               bool
	amendment, amendmentRu string
}

const demoDay = 24 * time.Hour

var demoEvents = []demoEvent{
	{
		creator: DemoCreatorEmail, created: 13 * demoDay, closesIn: 170 * demoDay, trades: 26, cup: true,
		event: market.NewEvent{
			Name: "European Champions Cup: this season's winner", NameRu: "Кубок европейских чемпионов: победитель сезона",
			Tags: []string{"football", "finals"},
			Pools: []market.NewPool{{
				Name: "Who lifts the cup?", NameRu: "Кто поднимет кубок?",
				Rules:   "Resolves to the club that wins this season's final, after extra time and penalties if needed. Other covers every club not listed. If the final is not played by the pool's closing time, the pool is voided.",
				RulesRu: "Исход — клуб, выигравший финал этого сезона, с учётом дополнительного времени и серии пенальти. «Другой клуб» — любой клуб не из списка. Если финал не сыгран до закрытия пула, пул аннулируется.",
				Margin:  0.02, B: 1_500_000, Exclusive: true,
				Markets: []market.NewMarket{
					{Name: "Real Madrid", NameRu: "Реал Мадрид", Probability: 0.22},
					{Name: "Manchester City", NameRu: "Манчестер Сити", Probability: 0.19},
					{Name: "Bayern Munich", NameRu: "Бавария", Probability: 0.16},
					{Name: "Arsenal", NameRu: "Арсенал", Probability: 0.14},
					{Name: "Paris Saint-Germain", NameRu: "ПСЖ", Probability: 0.12},
					{Name: "Other", NameRu: "Другой клуб", Probability: 0.17, Other: true},
				},
			}},
		},
		ends: [][]float64{{0.25, 0.14, 0.2, 0.18, 0.1, 0.13}},
		comments: []demoComment{
			{by: "dmitry@demo.predictkit", ago: 6 * demoDay, text: "City's midfield is thin after the injuries. I sold half of my YES."},
			{by: "sam@demo.predictkit", ago: 5*demoDay + 20*time.Hour, text: "Their bench is deep enough; the price overreacted.", replyTo: 1},
			{by: DemoMariaEmail, ago: 2 * demoDay, text: "Бавария слишком дёшево стоит, взяла на 300 ₽."},
		},
	},
	{
		creator: DemoCreatorEmail, created: 11 * demoDay, closesIn: 12 * demoDay, trades: 28,
		event: market.NewEvent{
			Name: "US federal government shutdown before the funding deadline?", NameRu: "Шатдаун федерального правительства США до истечения финансирования?",
			Tags: []string{"politics", "economy"},
			Pools: []market.NewPool{{
				Name: "Shutdown", NameRu: "Шатдаун",
				Rules:   "Resolves YES if a lapse in appropriations causes a federal government shutdown that begins before the pool's closing time, as announced by the Office of Management and Budget. A stopgap bill signed in time resolves NO.",
				RulesRu: "ДА, если из-за отсутствия утверждённого бюджета федеральное правительство приостановит работу до закрытия пула (по объявлению Административно-бюджетного управления). Временный закон о финансировании, подписанный вовремя, — НЕТ.",
				Margin:  0.02, B: 900_000,
				Markets: []market.NewMarket{{Name: "Shutdown begins", NameRu: "Шатдаун начнётся", Probability: 0.35}},
			}},
		},
		ends: [][]float64{{0.52}},
		comments: []demoComment{
			{by: "lucas@demo.predictkit", ago: 3 * demoDay, text: "Both leaders say they want a deal before the holidays. I'm on NO."},
			{by: "olga@demo.predictkit", ago: 20 * time.Hour, text: "Рынок недооценивает риск: голосование снова перенесли."},
		},
	},
	{
		creator: DemoCreatorEmail, created: 9 * demoDay, closesIn: 20 * demoDay, trades: 22,
		event: market.NewEvent{
			Name: "French government survives the next no-confidence vote?", NameRu: "Правительство Франции переживёт следующий вотум недоверия?",
			Tags: []string{"politics"},
			Pools: []market.NewPool{{
				Name: "No-confidence vote", NameRu: "Вотум недоверия",
				Rules:   "Resolves YES if the next motion of no confidence voted on in the National Assembly before the pool's closing time fails. NO if it passes. If no motion is voted on by then, the market is voided.",
				RulesRu: "ДА, если следующая резолюция недоверия, поставленная на голосование в Национальном собрании до закрытия пула, не наберёт большинства; НЕТ, если наберёт. Если голосования не будет, рынок аннулируется.",
				Margin:  0.02, B: 700_000,
				Markets: []market.NewMarket{{Name: "Government survives", NameRu: "Правительство устоит", Probability: 0.58, YesName: "Survives", NoName: "Falls"}},
			}},
		},
		ends: [][]float64{{0.66}},
	},
	{
		creator: DemoCreatorEmail, created: 10 * demoDay, closesIn: 9 * demoDay, trades: 20,
		event: market.NewEvent{
			Name: "Federal Reserve: decision at the next meeting", NameRu: "ФРС: решение по ставке на ближайшем заседании",
			Tags: []string{"economy"},
			Pools: []market.NewPool{{
				Name: "Rate decision", NameRu: "Решение по ставке",
				Rules:   "Resolves to the change in the target range for the federal funds rate announced after the next FOMC meeting. A cut or hike of any size counts as a cut or a hike.",
				RulesRu: "Исход — изменение целевого диапазона ставки по федеральным фондам, объявленное по итогам ближайшего заседания FOMC. Снижение или повышение любого размера считается снижением или повышением.",
				Margin:  0.02, B: 1_200_000, Exclusive: true,
				Markets: []market.NewMarket{
					{Name: "Cut", NameRu: "Снижение", Probability: 0.55},
					{Name: "Hold", NameRu: "Без изменений", Probability: 0.4},
					{Name: "Hike", NameRu: "Повышение", Probability: 0.05},
				},
			}},
		},
		ends: [][]float64{{0.71, 0.26, 0.03}},
		comments: []demoComment{
			{by: "kenji@demo.predictkit", ago: 4 * demoDay, text: "Core PCE came in soft again. A cut looks like the base case now."},
		},
	},
	{
		creator: DemoCreatorEmail, created: 8 * demoDay, closesIn: 25 * demoDay, trades: 22,
		event: market.NewEvent{
			Name: "Euro area inflation below 2% in the next flash estimate?", NameRu: "Инфляция в еврозоне ниже 2% по следующей предварительной оценке?",
			Tags: []string{"economy"},
			Pools: []market.NewPool{{
				Name: "Flash HICP", NameRu: "Предварительный ИПЦ",
				Rules:   "Resolves YES if Eurostat's next flash estimate of annual HICP inflation for the euro area, published before the pool's closing time, is below 2.0%.",
				RulesRu: "ДА, если следующая предварительная оценка годовой инфляции (HICP) в еврозоне от Евростата, опубликованная до закрытия пула, окажется ниже 2,0%.",
				Margin:  0.02, B: 600_000,
				Markets: []market.NewMarket{{Name: "Below 2.0%", NameRu: "Ниже 2,0%", Probability: 0.46}},
			}},
		},
		ends: [][]float64{{0.39}},
	},
	{
		creator: DemoCreatorEmail, created: 12 * demoDay, closesIn: 29 * demoDay, trades: 20,
		event: market.NewEvent{
			Name: "Bitcoin at the end of the month", NameRu: "Биткоин в конце месяца",
			Tags: []string{"crypto", "economy"},
			Pools: []market.NewPool{{
				Name: "BTC/USD at the close", NameRu: "BTC/USD на закрытии",
				Rules:   "Each market resolves YES if the BTC/USD price on Coinbase at the pool's closing time is above its level, NO otherwise.",
				RulesRu: "Каждый рынок — ДА, если цена BTC/USD на Coinbase в момент закрытия пула выше указанного уровня, иначе НЕТ.",
				Margin:  0.03, B: 800_000,
				Markets: []market.NewMarket{
					{Name: "Above $100,000", NameRu: "Выше $100 000", Probability: 0.78},
					{Name: "Above $120,000", NameRu: "Выше $120 000", Probability: 0.47},
					{Name: "Above $150,000", NameRu: "Выше $150 000", Probability: 0.18},
				},
			}},
		},
		ends: [][]float64{{0.84, 0.38, 0.09}},
		comments: []demoComment{
			{by: "kenji@demo.predictkit", ago: 5 * demoDay, text: "ETF inflows have slowed for three weeks. $150k by the month's end is a long shot."},
			{by: "priya@demo.predictkit", ago: 4*demoDay + 18*time.Hour, text: "Agreed, but $120k is still close to a coin flip.", replyTo: 1},
			{by: "dmitry@demo.predictkit", ago: 9 * time.Hour, text: "Продал YES на 150k, оставил 100k."},
		},
	},
	{
		creator: DemoCreatorEmail, created: 7 * demoDay, closesIn: 60 * demoDay, trades: 20,
		event: market.NewEvent{
			Name: "Ethereum outperforms Bitcoin this quarter?", NameRu: "Эфир обгонит биткоин по доходности в этом квартале?",
			Tags: []string{"crypto"},
			Pools: []market.NewPool{{
				Name: "ETH vs BTC", NameRu: "ETH против BTC",
				Rules:   "Resolves YES if ETH/USD gains more (or loses less), in percent, than BTC/USD from the pool's opening to its closing time, both on Coinbase.",
				RulesRu: "ДА, если ETH/USD вырастет сильнее (или упадёт меньше) в процентах, чем BTC/USD, от открытия пула до его закрытия, по данным Coinbase.",
				Margin:  0.03, B: 500_000,
				Markets: []market.NewMarket{{Name: "ETH outperforms", NameRu: "ETH обгонит", Probability: 0.41}},
			}},
		},
		ends: [][]float64{{0.48}},
	},
	{
		creator: "elena@demo.predictkit", created: 10 * demoDay, closesIn: 140 * demoDay, trades: 22,
		event: market.NewEvent{
			Name: "Artemis II launches with its crew before the market closes?", NameRu: "Artemis II стартует с экипажем до закрытия рынка?",
			Tags: []string{"science"},
			Pools: []market.NewPool{{
				Name: "Crewed launch", NameRu: "Пилотируемый старт",
				Rules:   "Resolves YES if NASA's Artemis II mission lifts off with its crew aboard before the pool's closing time, per NASA's launch coverage.",
				RulesRu: "ДА, если миссия NASA Artemis II стартует с экипажем на борту до закрытия пула, по данным трансляции запуска NASA.",
				Margin:  0.02, B: 700_000,
				Markets: []market.NewMarket{{Name: "Launches in time", NameRu: "Стартует вовремя", Probability: 0.52}},
			}},
		},
		ends: [][]float64{{0.61}},
		comments: []demoComment{
			{by: "priya@demo.predictkit", ago: 2 * demoDay, text: "The heat-shield review is closed; the launch window is what matters now."},
		},
	},
	{
		creator: "elena@demo.predictkit", created: 6 * demoDay, closesIn: 80 * demoDay, trades: 20,
		event: market.NewEvent{
			Name: "An open-weights model tops the LMArena text leaderboard?", NameRu: "Открытая модель возглавит текстовый рейтинг LMArena?",
			Tags: []string{"science"},
			Pools: []market.NewPool{{
				Name: "Leaderboard", NameRu: "Рейтинг",
				Rules:   "Resolves YES if, at any time before the pool's closing time, a model whose weights are openly downloadable is ranked first (alone or tied) on the LMArena text leaderboard.",
				RulesRu: "ДА, если до закрытия пула модель с открыто доступными весами хотя бы раз займёт первое место (одна или вместе с другими) в текстовом рейтинге LMArena.",
				Margin:  0.02, B: 500_000,
				Markets: []market.NewMarket{{Name: "Open model on top", NameRu: "Открытая модель на первом месте", Probability: 0.27}},
			}},
		},
		ends: [][]float64{{0.22}},
	},
	{
		creator: "elena@demo.predictkit", created: 9 * demoDay, closesIn: 90 * demoDay, trades: 20,
		event: market.NewEvent{
			Name: "A non-English-language film wins Best Picture at the next Oscars?", NameRu: "«Оскар» за лучший фильм получит картина не на английском языке?",
			Tags: []string{"culture"},
			Pools: []market.NewPool{{
				Name: "Best Picture", NameRu: "Лучший фильм",
				Rules:   "Resolves YES if the film that wins Best Picture at the next Academy Awards ceremony is mainly in a language other than English, as the Academy lists it.",
				RulesRu: "ДА, если фильм, получивший «Оскар» в номинации «Лучший фильм» на ближайшей церемонии, снят преимущественно не на английском языке (по данным Академии).",
				Margin:  0.02, B: 500_000,
				Markets: []market.NewMarket{{Name: "Non-English winner", NameRu: "Победит неанглоязычный фильм", Probability: 0.16}},
			}},
		},
		ends: [][]float64{{0.21}},
	},
	{
		creator: "elena@demo.predictkit", created: 5 * demoDay, closesIn: 150 * demoDay, trades: 20,
		event: market.NewEvent{
			Name: "Eurovision: the host country finishes in the top 10?", NameRu: "Евровидение: страна-хозяйка войдёт в десятку?",
			Tags: []string{"culture"},
			Pools: []market.NewPool{{
				Name: "Host in the top 10", NameRu: "Хозяйка в десятке",
				Rules:   "Resolves YES if the host country's entry places 1st to 10th in the grand final of the next Eurovision Song Contest, by the official scoreboard.",
				RulesRu: "ДА, если участник от страны-хозяйки займёт с 1-го по 10-е место в финале ближайшего конкурса «Евровидение» по официальной таблице.",
				Margin:  0.02, B: 400_000,
				Markets: []market.NewMarket{{Name: "Top 10", NameRu: "В десятке", Probability: 0.33}},
			}},
		},
		ends: [][]float64{{0.4}},
	},
	{
		creator: DemoCreatorEmail, created: 8 * demoDay, closesIn: 4 * demoDay, trades: 22,
		event: market.NewEvent{
			Name: "World Chess Championship: decided in tiebreaks?", NameRu: "Матч за шахматную корону: решится на тай-брейках?",
			Tags: []string{"sport"},
			Pools: []market.NewPool{{
				Name: "Tiebreaks", NameRu: "Тай-брейки",
				Rules:   "Resolves YES if the World Chess Championship match is tied after its classical games and decided in rapid or blitz tiebreaks, NO if a player wins it in the classical games.",
				RulesRu: "ДА, если матч за звание чемпиона мира по шахматам завершится вничью в классике и решится на тай-брейках в рапид или блиц; НЕТ, если победитель определится в классических партиях.",
				Margin:  0.02, B: 600_000,
				Markets: []market.NewMarket{{Name: "Tiebreaks", NameRu: "Тай-брейки", Probability: 0.38}},
			}},
		},
		ends: [][]float64{{0.57}},
		comments: []demoComment{
			{by: "olga@demo.predictkit", ago: 30 * time.Hour, text: "После седьмой ничьей подряд тай-брейки почти неизбежны."},
		},
	},
	{
		creator: DemoCreatorEmail, created: 12 * demoDay, closesIn: -3 * demoDay, trades: 16,
		event: market.NewEvent{
			Name: "US unemployment at or above 4.5% in the latest jobs report?", NameRu: "Безработица в США 4,5% или выше в последнем отчёте?",
			Tags: []string{"economy"},
			Pools: []market.NewPool{{
				Name: "Unemployment rate", NameRu: "Уровень безработицы",
				Rules:   "Resolves YES if the unemployment rate in the Bureau of Labor Statistics' monthly Employment Situation report released before the pool's closing time is 4.5% or higher.",
				RulesRu: "ДА, если уровень безработицы в ежемесячном отчёте Бюро статистики труда, вышедшем до закрытия пула, составит 4,5% или больше.",
				Margin:  0.02, B: 600_000,
				Markets: []market.NewMarket{{Name: "4.5% or higher", NameRu: "4,5% или выше", Probability: 0.4}},
			}},
		},
		ends:   [][]float64{{0.22}},
		settle: &demoSettlement{ago: 2 * demoDay, outcome: "NO"},
		comments: []demoComment{
			{by: "sam@demo.predictkit", ago: 2*demoDay - 3*time.Hour, text: "Called it: 4.3%. Paid out within a second."},
		},
	},
	{
		creator: DemoCreatorEmail, created: 10 * demoDay, closesIn: -5 * demoDay, trades: 12,
		event: market.NewEvent{
			Name: "City derby: does the home side win?", NameRu: "Городское дерби: победят ли хозяева?",
			Tags: []string{"football"},
			Pools: []market.NewPool{{
				Name: "Home win", NameRu: "Победа хозяев",
				Rules:   "Resolves YES if the home side wins in regular time, NO on a draw or an away win. If the match is not played on its scheduled date, the market is voided and every stake refunded.",
				RulesRu: "ДА, если хозяева победят в основное время; НЕТ при ничьей или победе гостей. Если матч не сыгран в назначенный день, рынок аннулируется, а все ставки возвращаются.",
				Margin:  0.02, B: 500_000,
				Markets: []market.NewMarket{{Name: "Home win", NameRu: "Победа хозяев", Probability: 0.44, YesName: "Home wins", NoName: "Draw or away win"}},
			}},
		},
		ends: [][]float64{{0.5}},
		settle: &demoSettlement{ago: 4 * demoDay, outcome: "VOID", operator: true,
			amendment:   "The league postponed the match because of a frozen pitch; as the rules say, the market is voided and every stake refunded.",
			amendmentRu: "Лига перенесла матч из-за замёрзшего поля; по правилам рынок аннулирован, все ставки возвращены."},
		comments: []demoComment{
			{by: "olga@demo.predictkit", ago: 4*demoDay - 2*time.Hour, text: "Матч перенесли — деньги вернули, всё честно."},
		},
	},
}
