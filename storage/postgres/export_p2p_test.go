package postgres

import "github.com/predictkit/predictkit/p2p"

// P2PAdsQuery is the SQL the P2P list runs for q, with its arguments.
func P2PAdsQuery(q p2p.Query) (string, []any) { return adsQuery(q) }

// ChatQueries are the chat's read statements that must walk an index.
var ChatQueries = map[string]struct {
	SQL  string
	Args []any
}{
	"history":        {sqlChatMessages, []any{int64(1)}},
	"operator queue": {sqlChatSessions, []any{50, 0}},
}
