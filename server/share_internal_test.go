package server

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// cyrillicCard is a card with a long Russian title and row names.
func cyrillicCard() *shareCard {
	return &shareCard{EventID: 7,
		Title: "Финал Кубка: кто победит в матче «Нортсайд» — «Саутбэй» в воскресенье, и будет ли дополнительное время и серия пенальти после основного времени?",
		Rows: []shareRow{
			{Name: "Нортсайд", Prob: 0.588, Label: "58.8%"},
			{Name: "Саутбэй Юнайтед и очень длинное название клуба, которое не помещается", Prob: 0.3, Label: "30.0%"},
			{Name: "Ничья", Prob: 1, Label: "YES won"},
			{Name: "Больше 2,5 голов", Prob: 0.41, Label: "41.0%"},
			{Name: "Обе забьют", Prob: 0.5, Label: "50.0%"},
			{Name: "Пенальти", Prob: 0.1, Label: "10.0%"},
		}}
}

// TestCardText: the Go fonts have the glyphs of a Russian name, and a
// long title wraps into at most two lines no wider than the card's text,
// the last one ending in "…".
func TestCardText(t *testing.T) {
	fonts, err := cardFonts()
	if err != nil {
		t.Fatal(err)
	}
	face, err := fonts.face(fonts.bold, cardTitleSize)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("every letter of a Russian title has its glyph", func(t *testing.T) {
		for _, r := range "АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯабвгдеёжзийклмнопрстуфхцчшщъыьэюя«»—…" {
			if _, _, ok := face.GlyphBounds(r); !ok {
				t.Errorf("no glyph for %q", r)
			}
		}
	})
	width := cardWidth - 2*cardPad
	t.Run("a long title wraps into two lines that fit, the last ellipsized", func(t *testing.T) {
		lines := wrapText(face, cyrillicCard().Title, width, cardTitleLines)
		if len(lines) != 2 || !strings.HasSuffix(lines[1], "…") {
			t.Fatalf("lines = %q", lines)
		}
		for _, l := range lines {
			if measure(face, l) > width || !utf8.ValidString(l) {
				t.Errorf("line %q is %d px wide (or not UTF-8), over %d", l, measure(face, l), width)
			}
		}
	})
	t.Run("a word wider than a line is broken, not overflowing", func(t *testing.T) {
		lines := wrapText(face, strings.Repeat("Ж", 80), width, cardTitleLines)
		if len(lines) != 2 || !strings.HasSuffix(lines[1], "…") || measure(face, lines[0]) > width {
			t.Errorf("lines = %q", lines)
		}
	})
	t.Run("a short title is one line, as it is", func(t *testing.T) {
		if lines := wrapText(face, "Дерби", width, cardTitleLines); len(lines) != 1 || lines[0] != "Дерби" {
			t.Errorf("lines = %q", lines)
		}
	})
	t.Run("ellipsize keeps what fits and marks the cut", func(t *testing.T) {
		if got := ellipsize(face, "Нортсайд", 1000); got != "Нортсайд" {
			t.Errorf("ellipsize = %q", got)
		}
		if got := ellipsize(face, "Нортсайд Саутбэй", 200); !strings.HasSuffix(got, "…") || measure(face, got) > 200 {
			t.Errorf("ellipsize = %q (%d px)", got, measure(face, got))
		}
	})
}

// TestRenderCard: a Russian card is a 1200×630 PNG with text drawn in the
// title's area. PREDICTKIT_CARD_OUT=file.png writes it, to look at.
func TestRenderCard(t *testing.T) {
	b, err := renderCard(cyrillicCard())
	if err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("PREDICTKIT_CARD_OUT"); out != "" {
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds() != image.Rect(0, 0, cardWidth, cardHeight) {
		t.Fatalf("bounds %v", img.Bounds())
	}
	dark := 0
	for y := cardPad; y < cardPad+2*cardTitleLine; y++ {
		for x := cardPad; x < cardWidth-cardPad; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r+g+bl < 3*0x8000 {
				dark++
			}
		}
	}
	if dark < 5000 {
		t.Errorf("the title's area has %d dark pixels: the title was not drawn", dark)
	}
}

// TestCardCache: concurrent requests for a card not yet drawn draw it
// once; a new version draws again; the cache keeps at most its size.
func TestCardCache(t *testing.T) {
	cc := newCardCache(2)
	var calls atomic.Int64
	render := func(v string) func() ([]byte, error) {
		return func() ([]byte, error) {
			calls.Add(1)
			time.Sleep(50 * time.Millisecond)
			return []byte(v), nil
		}
	}
	t.Run("twenty concurrent requests draw the card once", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				if b, err := cc.get(1, "v1", render("v1")); err != nil || string(b) != "v1" {
					t.Errorf("get = %q, %v", b, err)
				}
			})
		}
		wg.Wait()
		if n := calls.Load(); n != 1 {
			t.Errorf("drawn %d times", n)
		}
	})
	t.Run("a cached card is not drawn again; a new version is", func(t *testing.T) {
		cc.get(1, "v1", render("v1"))
		if n := calls.Load(); n != 1 {
			t.Errorf("drawn %d times", n)
		}
		if b, _ := cc.get(1, "v2", render("v2")); string(b) != "v2" || calls.Load() != 2 {
			t.Errorf("get = %q after %d draws", b, calls.Load())
		}
	})
	t.Run("the cache keeps its size, dropping the least recently used", func(t *testing.T) {
		cc.get(2, "a", render("2a"))
		cc.get(1, "v2", render("v2")) // 1 is now the most recent
		cc.get(3, "a", render("3a"))  // drops 2
		if len(cc.items) != 2 || cc.items[2] != nil {
			t.Errorf("the cache holds %d cards: %v", len(cc.items), cc.items)
		}
		before := calls.Load()
		cc.get(1, "v2", render("v2"))
		if calls.Load() != before {
			t.Error("the most recent card was dropped")
		}
	})
	t.Run("a failed render is not cached", func(t *testing.T) {
		if _, err := cc.get(9, "x", func() ([]byte, error) { return nil, fmt.Errorf("boom") }); err == nil {
			t.Fatal("no error")
		}
		if b, err := cc.get(9, "x", render("9x")); err != nil || string(b) != "9x" {
			t.Errorf("get = %q, %v", b, err)
		}
	})
}

// BenchmarkShareCard: drawing a card (cold) and serving it from the cache
// (hot). docs/benchmarks.md has the figures.
func BenchmarkShareCard(b *testing.B) {
	card := cyrillicCard()
	b.Run("cold render", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := renderCard(card); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached hit", func(b *testing.B) {
		cc := newCardCache(shareCardCacheSize)
		version := card.Version()
		render := func() ([]byte, error) { return renderCard(card) }
		if _, err := cc.get(card.EventID, version, render); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			// What a request for a card already drawn costs besides the
			// store's read: its version and the lookup.
			if _, err := cc.get(card.EventID, card.Version(), render); err != nil {
				b.Fatal(err)
			}
		}
	})
}
