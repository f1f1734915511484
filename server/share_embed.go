package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/predictkit/predictkit/web"
)

// The embed's files in the web app's file system (web/static/embed/):
// inlined into its page, so that a framed card makes no request but for
// the price.
const (
	embedScriptFile = "embed/embed.js"
	embedStyleFile  = "embed/embed.css"
)

// embedPage is GET /embed/markets/{id}'s page: its template and its
// Content-Security-Policy, which allows its own inline script and style
// (by their hashes), fetches to this server (the market and its stream),
// and framing by any site; nothing else.
type embedPage struct {
	tmpl *template.Template
	csp  string
	// script and style are the inline elements, read once at start:
	// the files never change while the server runs.
	script, style template.HTML
}

// embedPageHTML is the page. The script and the style are the embedded
// files, verbatim: what the policy's hashes are of.
const embedPageHTML = `<!doctype html>
<html lang="{{.Lang}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="robots" content="noindex">
<title>{{.Market}} · {{.Event}} · predictkit</title>
{{.Style}}
</head>
<body>
<main data-market="{{.MarketID}}" data-price="{{.Price}}" data-outcome="{{.Outcome}}" data-yes="{{.T.Yes}}" data-won-yes="{{.T.WonYes}}" data-won-no="{{.T.WonNo}}" data-void="{{.T.Void}}">
<p class="event">{{.Event}}</p>
<h1>{{.Market}}</h1>
<p class="price" aria-live="polite" aria-atomic="true"><span id="price">{{.Label}}</span><span class="side" id="side">{{if not .Outcome}}{{.T.Yes}}{{end}}</span></p>
<div class="bar" aria-hidden="true"><span id="fill"></span></div>
<p class="link"><a href="{{.EventURL}}" target="_blank" rel="noopener">{{.T.Trade}}<span class="sr-only"> {{.T.NewTab}}</span></a></p>
</main>
{{.Script}}
</body>
</html>
`

func loadEmbedPage() (*embedPage, error) {
	files := web.FS()
	js, err := fs.ReadFile(files, embedScriptFile)
	if err != nil {
		return nil, fmt.Errorf("embed page: %w", err)
	}
	css, err := fs.ReadFile(files, embedStyleFile)
	if err != nil {
		return nil, fmt.Errorf("embed page: %w", err)
	}
	hash := func(b []byte) string {
		sum := sha256.Sum256(b)
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	// The files are ours, embedded at build: trusted as HTML.
	script := template.HTML("<script>" + string(js) + "</script>")
	style := template.HTML("<style>" + string(css) + "</style>")
	tmpl, err := template.New("embed").Parse(embedPageHTML)
	if err != nil {
		return nil, err
	}
	return &embedPage{
		tmpl: tmpl, script: script, style: style,
		csp: "default-src 'none'; script-src " + hash(js) + "; style-src " + hash(css) +
			"; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors *",
	}, nil
}

// embedView is what the page's template reads.
type embedView struct {
	Lang                  string
	T                     embedStrings
	MarketID              int64
	Market, Event         string
	Price, Label, Outcome string
	EventURL              string
	Script, Style         template.HTML
}

// embedStrings are the page's words in one language.
type embedStrings struct {
	Yes, WonYes, WonNo, Void, Trade, NewTab string
}

// embedLanguages: the embed speaks English, or Russian with ?lang=ru
// (then the names are the Russian ones where the creator gave them), as
// the app does.
var embedLanguages = map[string]embedStrings{
	"en": {Yes: "YES", WonYes: "YES won", WonNo: "NO won", Void: "Void", Trade: "Trade on predictkit", NewTab: "(opens in a new tab)"},
	"ru": {Yes: "ДА", WonYes: "Исход: ДА", WonNo: "Исход: НЕТ", Void: "Аннулирован", Trade: "Торговать на predictkit", NewTab: "(откроется в новой вкладке)"},
}

// outcomeLabel is how the page names outcome ("YES", "NO", "VOID").
func (s embedStrings) outcomeLabel(outcome string) string {
	switch outcome {
	case "YES":
		return s.WonYes
	case "NO":
		return s.WonNo
	}
	return s.Void
}

// localName is name in lang: the Russian one when asked for and given.
func localName(lang, name, nameRu string) string {
	if lang == "ru" && nameRu != "" {
		return nameRu
	}
	return name
}

// GET /embed/markets/{id}?lang=: the page of one market. Checks run 400
// invalid_id, 404 market_not_found (unknown, or its event not shared).
var errsEmbed = table("internal_error",
	on(errNotShared, http.StatusNotFound, "market_not_found"),
)

// handleEmbed answers the page. Its headers differ from every other
// answer's on framing only: no X-Frame-Options, and frame-ancestors *.
func (h *shareHandlers) handleEmbed(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	m, e, err := h.sharedMarket(c.UserContext(), id)
	if err != nil {
		return err
	}
	lang := "en"
	if c.Query("lang") == "ru" {
		lang = "ru"
	}
	v := embedView{Lang: lang, T: embedLanguages[lang], MarketID: m.ID,
		Market: localName(lang, m.Name, m.NameRu), Event: localName(lang, e.Name, e.NameRu), EventURL: eventURL(h.baseURL(c), e.ID),
		Price: strconv.FormatFloat(m.YesProbability(), 'f', -1, 64), Outcome: m.Outcome(),
		Script: h.embed.script, Style: h.embed.style}
	v.Label = percent(m.YesProbability())
	if v.Outcome != "" {
		v.Label = v.T.outcomeLabel(v.Outcome)
	}
	var b bytes.Buffer
	if err := h.embed.tmpl.Execute(&b, v); err != nil {
		return err
	}
	hd := &c.Response().Header
	hd.Del(fiber.HeaderXFrameOptions)
	hd.Set(fiber.HeaderContentSecurityPolicy, h.embed.csp)
	hd.Set(fiber.HeaderCacheControl, "no-cache")
	hd.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Send(b.Bytes())
}
