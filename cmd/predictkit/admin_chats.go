package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/predictkit/predictkit/client"
)

// The operator's side of the support chat: the sessions waiting for one.

// adminChatsPage is the server's largest page of sessions.
const adminChatsPage = 100

func adminChats(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	all := fs.Bool("all", false, "list every session, not only those waiting for an operator")
	limit := fs.Int("limit", 1000, "list at most this many sessions")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if *limit <= 0 {
			return usagef("-limit must be positive")
		}
		// The server lists open escalated sessions first, then the rest by
		// latest activity: read pages until the waiting ones end.
		list := []json.RawMessage{}
		var rows [][]string
	pages:
		for offset := 0; len(list) < *limit; offset += adminChatsPage {
			res, err := a.AdminChatSessionsWithResponse(ctx, &client.AdminChatSessionsParams{
				Limit: new(strconv.Itoa(adminChatsPage)), Offset: new(strconv.Itoa(offset)),
			})
			if err := a.check(res, err); err != nil {
				return err
			}
			page, err := decoded(res.JSON200)
			if err != nil {
				return err
			}
			// -json prints each session as the server wrote it.
			var raw struct {
				Sessions []json.RawMessage `json:"sessions"`
			}
			if err := json.Unmarshal(res.Body, &raw); err != nil || len(raw.Sessions) != len(page.Sessions) {
				return fmt.Errorf("the server's answer is not a list of sessions: %v", err)
			}
			for i, s := range page.Sessions {
				if !*all && (!s.Escalated || s.Closed) {
					break pages
				}
				if len(list) == *limit {
					break pages
				}
				list = append(list, raw.Sessions[i])
				user := "anonymous"
				if s.UserID != nil {
					user = itoa(*s.UserID)
				}
				escalated := "-"
				if s.EscalatedAt != nil {
					escalated = millisTime(*s.EscalatedAt)
				}
				state := "open"
				if s.Closed {
					state = "closed"
				}
				rows = append(rows, []string{s.SessionID, user, string(s.Language), escalated, millisTime(s.LastMessageAt), itoa(s.MessageCount), state})
			}
			if len(page.Sessions) < adminChatsPage {
				break
			}
		}
		if out.json {
			b, err := json.Marshal(map[string]any{"sessions": list})
			if err != nil {
				return err
			}
			return out.rawJSON(b)
		}
		if len(rows) == 0 {
			what := "No chat is waiting for an operator."
			if *all {
				what = "No chat sessions."
			}
			_, err := fmt.Fprintln(out.w, what)
			return err
		}
		return out.table([]string{"SESSION", "USER", "LANG", "ESCALATED_AT", "LAST_MESSAGE_AT", "MESSAGES", "STATE"}, rows...)
	}
}

func millisTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05Z")
}
