package postgres

import (
	"testing"
	"time"
)

func TestPositions(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	life := 5 * time.Second
	cases := []struct {
		name string
		run  func(p *positions) uint64
		want uint64
	}{
		{"a user who wrote nothing needs nothing", func(p *positions) uint64 { return p.get(1, t0) }, 0},
		{"a user's read needs their last write", func(p *positions) uint64 {
			p.put(1, 100, t0)
			p.put(1, 200, t0.Add(time.Second))
			return p.get(1, t0.Add(time.Second))
		}, 200},
		{"another user's write is not waited for", func(p *positions) uint64 {
			p.put(1, 100, t0)
			return p.get(2, t0)
		}, 0},
		{"a position is forgotten after its life", func(p *positions) uint64 {
			p.put(1, 100, t0)
			return p.get(1, t0.Add(life+time.Nanosecond))
		}, 0},
		{"an older position read later does not lower a live one", func(p *positions) uint64 {
			p.put(1, 300, t0)
			p.put(1, 200, t0.Add(time.Second))
			return p.get(1, t0.Add(time.Second))
		}, 300},
		{"past the bound, the users left out share one position", func(p *positions) uint64 {
			p.put(1, 100, t0)
			p.put(2, 200, t0)
			p.put(3, 300, t0) // no room: the shared position
			return p.get(3, t0)
		}, 300},
		{"the shared position holds for every user", func(p *positions) uint64 {
			p.put(1, 100, t0)
			p.put(2, 200, t0)
			p.put(3, 300, t0)
			return p.get(1, t0)
		}, 300},
		{"room is made by dropping positions past their life", func(p *positions) uint64 {
			p.put(1, 100, t0)
			p.put(2, 200, t0)
			p.put(3, 300, t0.Add(life+time.Second))
			return p.get(3, t0.Add(life+time.Second)) + p.overflow.lsn
		}, 300},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.run(newPositions(2, life)); got != c.want {
				t.Errorf("got %d, want %d", got, c.want)
			}
		})
	}
}
