package memory

import (
	"context"
	"slices"
	"strings"

	"github.com/predictkit/predictkit/market"
)

// Tags implements market.Store.
func (s *Store) Tags(context.Context) ([]market.Tag, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	counts := s.tagCounts()
	out := make([]market.Tag, 0, len(s.tags))
	for _, t := range s.tags {
		t.Events = counts[t.Slug]
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b market.Tag) int { return strings.Compare(a.Slug, b.Slug) })
	return out, nil
}

// PutTag implements market.Store.
func (s *Store) PutTag(_ context.Context, t *market.Tag) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tags == nil {
		s.tags = map[string]market.Tag{}
	}
	_, exists := s.tags[t.Slug]
	s.tags[t.Slug] = market.Tag{Slug: strings.Clone(t.Slug), Name: strings.Clone(t.Name), NameRu: strings.Clone(t.NameRu)}
	t.Events = s.tagCounts()[t.Slug]
	return !exists, nil
}

// tagCounts counts the active events carrying each tag. Called with mu
// held.
func (s *Store) tagCounts() map[string]int64 {
	counts := map[string]int64{}
	for _, e := range s.events {
		if e.IsActive {
			for _, slug := range e.Tags {
				counts[slug]++
			}
		}
	}
	return counts
}

// createTagged is createEvent for an event whose tags must each name a
// tag (*market.UnknownTagError, and nothing is written); the caller holds
// s.mu.
func (s *Store) createTagged(e *market.Event, subsidies []int64) error {
	if err := s.unknownTag(e.Tags); err != nil {
		return err
	}
	if err := s.createEvent(e, subsidies); err != nil {
		return err
	}
	s.events[e.ID].Tags = cloneStrings(e.Tags) // createEvent's copy shares the caller's slice
	if e.Tags == nil {
		e.Tags = []string{}
	}
	return nil
}

// cloneStrings is a deep copy of ss, never nil.
func cloneStrings(ss []string) []string {
	out := make([]string, len(ss))
	for i, v := range ss {
		out[i] = strings.Clone(v)
	}
	return out
}

// unknownTag is the first of slugs that names no tag, as a
// *market.UnknownTagError; nil when all do. Called with mu held.
func (s *Store) unknownTag(slugs []string) error {
	for _, slug := range slugs {
		if _, ok := s.tags[slug]; !ok {
			return &market.UnknownTagError{Slug: slug}
		}
	}
	return nil
}
