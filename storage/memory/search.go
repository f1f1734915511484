package memory

import (
	"cmp"
	"context"
	"slices"

	"github.com/predictkit/predictkit/account"
	"github.com/predictkit/predictkit/partner"
)

// SearchUsers implements account.Store: q.Matches over every user,
// newest first.
func (s *Store) SearchUsers(_ context.Context, q account.UserQuery) ([]*account.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []int64
	for id, rec := range s.users {
		if (q.Before <= 0 || id < q.Before) && q.Matches(&rec.u) {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b int64) int { return cmp.Compare(b, a) })
	if len(ids) > q.Limit {
		ids = ids[:q.Limit]
	}
	out := make([]*account.User, 0, len(ids))
	for _, id := range ids {
		u := cloneUser(s.users[id].u)
		out = append(out, &u)
	}
	return out, nil
}

// Partners implements partner.Store.
func (s *Store) Partners(_ context.Context) ([]*partner.Partner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*partner.Partner, 0, len(s.partners))
	for _, rec := range s.partners {
		p := rec.p
		out = append(out, &p)
	}
	slices.SortFunc(out, func(a, b *partner.Partner) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}
