package postgres

import "github.com/predictkit/predictkit/market"

// FeedStatement is the statement Feed runs for q's page of ids, with its
// arguments.
func FeedStatement(q market.FeedQuery) (string, []any) {
	var b feedSQL
	sql := b.build(q)
	return sql, b.args
}
