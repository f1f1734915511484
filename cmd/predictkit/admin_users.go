package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/predictkit/predictkit/client"
)

// The operator's side of users: finding them, crediting them, their roles,
// personal API keys and password resets.

func adminCredit(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("user", 0, "the user's id (required)")
	amount := fs.Int64("amount", 0, "kopecks to deposit (required)")
	bonus := fs.Bool("bonus", false, "deposit to the bonus balance instead")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("user", *id); err != nil {
			return err
		}
		if err := needAmount(*amount); err != nil {
			return err
		}
		res, err := a.AdminCreditWithResponse(ctx, *id, client.CreditRequest{AmountKopecks: *amount, Bonus: bonus})
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON200)
		if r == nil {
			return err
		}
		return out.table([]string{"USER", "BALANCE_KOPECKS", "BONUS_KOPECKS", "TOTAL_KOPECKS", "TOTAL_RUB"},
			[]string{itoa(r.UserID), itoa(r.Balance), itoa(r.BonusBalance), itoa(r.TotalBalance), rub(r.TotalBalance)})
	}
}

func adminUsers(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	query := fs.String("query", "", "part of an e-mail, name or nickname (any case), or a user id; empty lists every user")
	limit := fs.Int("limit", 0, "users per page, 1 to 100 (default: the server's, 20)")
	cursor := fs.String("cursor", "", "the cursor a previous page printed, for the page after it")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if *limit < 0 {
			return usagef("-limit must be positive")
		}
		params := &client.AdminSearchUsersParams{}
		if *query != "" {
			params.Query = query
		}
		if *limit > 0 {
			params.Limit = limit
		}
		if *cursor != "" {
			params.Cursor = cursor
		}
		res, err := a.AdminSearchUsersWithResponse(ctx, params)
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON200)
		if r == nil {
			return err
		}
		if len(r.Users) == 0 {
			_, err := fmt.Fprintln(out.w, "No user matches.")
			return err
		}
		rows := make([][]string, 0, len(r.Users))
		for _, u := range r.Users {
			nick, email := "-", u.Email
			if u.Nickname != nil {
				nick = *u.Nickname
			}
			if u.PartnerID != nil && u.ExternalID != nil {
				email = fmt.Sprintf("(partner %d: %s)", *u.PartnerID, *u.ExternalID)
			}
			rows = append(rows, []string{itoa(u.ID), email, u.Name, nick, yesNo(u.IsCreator), yesNo(u.IsStatsViewer), stamp(u.CreatedAt)})
		}
		if err := out.table([]string{"ID", "EMAIL", "NAME", "NICKNAME", "CREATOR", "STATS_VIEWER", "CREATED_AT"}, rows...); err != nil {
			return err
		}
		if r.NextCursor != nil {
			next := "predictkit admin users"
			if *query != "" {
				next += " -query " + shellQuote(*query)
			}
			if *limit > 0 {
				next += " -limit " + strconv.Itoa(*limit)
			}
			_, err = fmt.Fprintf(out.w, "\nMore users: %s -cursor %s\n", next, *r.NextCursor)
		}
		return err
	}
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@._-+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func adminSetRoles(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("user", 0, "the user's id (required)")
	var creator, stats boolFlag
	fs.Var(&creator, "creator", "true: the user may create events; false: may not")
	fs.Var(&stats, "stats-viewer", "true or false: the statistics viewer role")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("user", *id); err != nil {
			return err
		}
		if creator.v == nil && stats.v == nil {
			return usagef("give -creator=true|false and/or -stats-viewer=true|false")
		}
		// An unset flag is a nil pointer, which the body leaves out.
		res, err := a.AdminSetRolesWithResponse(ctx, *id, client.RolesPatch{IsCreator: creator.v, IsStatsViewer: stats.v})
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON200)
		if r == nil {
			return err
		}
		u := r.User
		return out.table([]string{"USER", "NAME", "EMAIL", "CREATOR", "STATS_VIEWER"},
			[]string{itoa(u.ID), u.Name, u.Email, yesNo(u.IsCreator), yesNo(u.IsStatsViewer)})
	}
}

func adminAPIKeys(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("user", 0, "the user's id (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("user", *id); err != nil {
			return err
		}
		res, err := a.AdminListAPIKeysWithResponse(ctx, *id)
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON200)
		if r == nil {
			return err
		}
		rows := make([][]string, 0, len(r.Keys))
		for _, k := range r.Keys {
			scopes := make([]string, len(k.Scopes))
			for i, s := range k.Scopes {
				scopes[i] = string(s)
			}
			used := "never"
			if k.LastUsedAt != nil {
				used = stamp(*k.LastUsedAt)
			}
			rows = append(rows, []string{itoa(k.ID), k.Name, strings.Join(scopes, ","), stamp(k.CreatedAt), used})
		}
		return out.table([]string{"KEY", "NAME", "SCOPES", "CREATED", "LAST_USED"}, rows...)
	}
}

func adminRevokeAPIKey(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	id := fs.Int64("user", 0, "the user's id (required)")
	key := fs.Int64("key", 0, "the key's id, as api-keys lists it (required)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if err := needID("user", *id); err != nil {
			return err
		}
		if err := needID("key", *key); err != nil {
			return err
		}
		res, err := a.AdminRevokeAPIKeyWithResponse(ctx, *id, *key)
		if err := a.check(res, err); err != nil {
			return err
		}
		if out.json {
			return out.rawJSON([]byte(`{"status":"revoked"}`))
		}
		_, err = fmt.Fprintf(out.w, "revoked key %d of user %d\n", *key, *id)
		return err
	}
}

// adminResetPassword issues a reset token. A user is named by id, or by
// e-mail, which the user search finds (it matches parts of e-mails, so
// the command keeps the one exact match, case aside).
func adminResetPassword(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		id, err := strconv.ParseInt(a.arg, 10, 64)
		if err != nil {
			if !strings.Contains(a.arg, "@") {
				return usagef("%q is neither a user id nor an e-mail", a.arg)
			}
			if id, err = a.userByEmail(ctx, a.arg); err != nil {
				return err
			}
		}
		if id <= 0 {
			return usagef("a user id is a positive number")
		}
		res, err := a.AdminPasswordResetWithResponse(ctx, id)
		if err := a.check(res, err); err != nil {
			return err
		}
		r, err := shown(out, res.Body, res.JSON201)
		if r == nil {
			return err
		}
		if err := out.table([]string{"USER", "EMAIL", "EXPIRES_AT"}, []string{itoa(r.UserID), r.Email, stamp(r.ExpiresAt)}); err != nil {
			return err
		}
		fmt.Fprintf(out.w, "\nReset token (shown this once; it works once, until it expires):\n%s\n", r.Token)
		if r.Link != nil {
			fmt.Fprintf(out.w, "\nLink:\n%s\n", *r.Link)
		} else {
			fmt.Fprintln(out.w, "\nNo link: the server has no PREDICTKIT_PUBLIC_URL. The user sends the token with a new password to POST /api/v1/auth/password/reset.")
		}
		return nil
	}
}

// userByEmail finds the id of the user registered with email.
func (a *adminClient) userByEmail(ctx context.Context, email string) (int64, error) {
	want := strings.ToLower(strings.TrimSpace(email))
	limit := 100
	params := &client.AdminSearchUsersParams{Query: &want, Limit: &limit}
	for range 100 { // 10,000 users whose e-mail contains this one: give up
		res, err := a.AdminSearchUsersWithResponse(ctx, params)
		if err := a.check(res, err); err != nil {
			return 0, err
		}
		page, err := decoded(res.JSON200)
		if err != nil {
			return 0, err
		}
		for _, u := range page.Users {
			if strings.EqualFold(u.Email, want) {
				return u.ID, nil
			}
		}
		if page.NextCursor == nil {
			break
		}
		params.Cursor = page.NextCursor
	}
	return 0, fmt.Errorf("no user has the e-mail %s", want)
}
