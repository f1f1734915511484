package market

import (
	"context"
	"errors"
	"fmt"

	"github.com/predictkit/predictkit/input"
)

// Limits on tags.
const (
	// MaxTagsPerEvent is how many tags one event may carry.
	MaxTagsPerEvent = 5
	// MaxSlugLen is the longest a tag's slug may be, in bytes (ASCII).
	MaxSlugLen = 32
	// MaxTagNameLen is the longest a tag's name may be, in characters: a
	// tag is a label on a card, not a title.
	MaxTagNameLen = 64
)

// Tag is a label the operator keeps and events carry, named by its slug.
// Slugs never change; names may.
type Tag struct {
	Slug   string
	Name   string
	NameRu string
	// Events is how many active (listed) events carry the tag: hidden
	// events are not counted, since the public cannot find them. Stores
	// set it on read; it is not kept.
	Events int64
}

// UnknownTagError is a store's answer to an event that carries a slug
// no tag has: nothing is written. The service turns it into an
// *input.Error naming the field.
type UnknownTagError struct {
	Slug string
}

func (e *UnknownTagError) Error() string { return fmt.Sprintf("market: no tag %q", e.Slug) }

// ValidSlug reports whether s is a tag slug: 1 to MaxSlugLen lower-case
// ASCII letters, digits and hyphens, neither starting nor ending with a
// hyphen.
func ValidSlug(s string) bool {
	if len(s) == 0 || len(s) > MaxSlugLen || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

const slugRule = "must be 1 to 32 lower-case letters (a-z), digits and hyphens, not starting or ending with a hyphen"

// checkEventTags checks the tags an event is to carry (on create, and on
// edit): at most MaxTagsPerEvent slugs, each valid and none repeated.
// Whether each names a tag is the store's to check, in the write's
// transaction (UnknownTagError). It returns the slugs to keep, never nil.
func checkEventTags(tags []string) ([]string, error) {
	if len(tags) > MaxTagsPerEvent {
		return nil, input.Invalid("tags", fmt.Sprintf("must hold at most %d tags", MaxTagsPerEvent))
	}
	out := make([]string, 0, len(tags))
	for i, slug := range tags {
		field := fmt.Sprintf("tags[%d]", i)
		if !ValidSlug(slug) {
			return nil, input.Invalid(field, slugRule)
		}
		for j, prev := range out {
			if prev == slug {
				return nil, input.Invalid(field, fmt.Sprintf("repeats tags[%d]", j))
			}
		}
		out = append(out, slug)
	}
	return out, nil
}

// tagRefusal turns a store's UnknownTagError about tags into the
// *input.Error that names the field; other errors are returned as they
// are.
func tagRefusal(err error, tags []string) error {
	var ut *UnknownTagError
	if !errors.As(err, &ut) {
		return err
	}
	for i, slug := range tags {
		if slug == ut.Slug {
			return input.Invalid(fmt.Sprintf("tags[%d]", i), fmt.Sprintf("no tag is named %s (GET /api/v1/tags lists them)", slug))
		}
	}
	return input.Invalid("tags", fmt.Sprintf("no tag is named %s", ut.Slug))
}

// Tags returns every tag, by slug, each with the number of active events
// that carry it.
func (s *Service) Tags(ctx context.Context) ([]Tag, error) {
	return s.store.Tags(ctx)
}

// PutTag creates tag slug or renames it (the operator's), and returns it
// with its count and whether it was created. *input.Error for a bad slug
// or name.
func (s *Service) PutTag(ctx context.Context, slug, name, nameRu string) (*Tag, bool, error) {
	if !ValidSlug(slug) {
		return nil, false, input.Invalid("slug", slugRule)
	}
	t := &Tag{Slug: slug}
	var err error
	if t.Name, err = text("name", name, true, MaxTagNameLen); err != nil {
		return nil, false, err
	}
	if t.NameRu, err = text("name_ru", nameRu, false, MaxTagNameLen); err != nil {
		return nil, false, err
	}
	created, err := s.store.PutTag(ctx, t)
	if err != nil {
		return nil, false, err
	}
	return t, created, nil
}
