package server

import (
	"bytes"
	"html"
	"strconv"
)

// shareSiteName is og:site_name and the oEmbed provider_name.
const shareSiteName = "predictkit"

// metaTags are the Open Graph and Twitter card tags of card's event page,
// and the link by which oEmbed consumers find its oEmbed answer; links
// absolute, under base. Every value is HTML-escaped: names are what
// users typed.
func metaTags(card *shareCard, base string) []byte {
	page := eventURL(base, card.EventID)
	img := ogImageURL(base, card.EventID)
	title := card.Title
	desc := card.Description()
	var b bytes.Buffer
	prop := func(name, value string) {
		b.WriteString(`<meta property="` + name + `" content="` + html.EscapeString(value) + "\">\n")
	}
	named := func(name, value string) {
		b.WriteString(`<meta name="` + name + `" content="` + html.EscapeString(value) + "\">\n")
	}
	named("description", desc)
	prop("og:type", "website")
	prop("og:site_name", shareSiteName)
	prop("og:title", title)
	prop("og:description", desc)
	prop("og:url", page)
	prop("og:image", img)
	prop("og:image:type", "image/png")
	prop("og:image:width", strconv.Itoa(cardWidth))
	prop("og:image:height", strconv.Itoa(cardHeight))
	prop("og:image:alt", title+" — "+desc)
	named("twitter:card", "summary_large_image")
	named("twitter:title", title)
	named("twitter:description", desc)
	named("twitter:image", img)
	b.WriteString(`<link rel="canonical" href="` + html.EscapeString(page) + "\">\n")
	b.WriteString(`<link rel="alternate" type="application/json+oembed" href="` + html.EscapeString(oEmbedURL(base, page)) +
		`" title="` + html.EscapeString(title) + "\">\n")
	return b.Bytes()
}

// withHead returns page with head inserted before its </head> and its
// <title> made title's, or page itself when it has no </head>.
func withHead(page, head []byte, title string) []byte {
	i := bytes.Index(page, []byte("</head>"))
	if i < 0 {
		return page
	}
	out := make([]byte, 0, len(page)+len(head)+len(title)+32)
	before := page[:i]
	if s, e := bytes.Index(before, []byte("<title>")), bytes.Index(before, []byte("</title>")); s >= 0 && e > s {
		out = append(out, before[:s]...)
		out = append(out, "<title>"+html.EscapeString(title+" · "+shareSiteName)+"</title>"...)
		out = append(out, before[e+len("</title>"):]...)
	} else {
		out = append(out, before...)
	}
	out = append(out, head...)
	return append(out, page[i:]...)
}
