package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/predictkit/predictkit/client"
)

// The operator's side of events: creating one on a creator's behalf.

// adminStdin is what `-f -` reads; tests replace it.
var adminStdin io.Reader = os.Stdin

// maxEventFile bounds what create-event reads: the server takes bodies of
// at most 1 MiB, so anything much larger is refused there anyway.
const maxEventFile = 4 << 20

func adminCreateEvent(fs *flag.FlagSet) func(context.Context, *adminClient, *adminOutput) error {
	file := fs.String("f", "", "the event's JSON `file`, the body of POST /api/v1/events; - reads standard input (required)")
	creator := fs.Int64("creator", 0, "the id of the user who will own the event; must be a creator, see set-roles (required)")
	activate := fs.Bool("activate", false, "show the event in the feed once created (it starts hidden)")
	return func(ctx context.Context, a *adminClient, out *adminOutput) error {
		if *file == "" {
			return usagef("give the event's JSON file with -f FILE (or -f - for standard input)")
		}
		if err := needID("creator", *creator); err != nil {
			return err
		}
		body, err := readEventFile(*file)
		if err != nil {
			return err
		}
		// The file goes as it is: the server, not this command, says what
		// is wrong with it, in the same words as for POST /api/v1/events.
		res, err := a.AdminCreateEventWithBodyWithResponse(ctx, *creator, "application/json", bytes.NewReader(body))
		if err := a.check(res, err); err != nil {
			return err
		}
		e, err := decoded(res.JSON201)
		if err != nil {
			return err
		}
		raw := res.Body
		if *activate {
			act, err := a.AdminSetEventActiveWithResponse(ctx, e.ID, client.ActiveRequest{IsActive: true})
			if err := a.check(act, err); err != nil {
				return fmt.Errorf("event %d was created but not activated (POST /api/v1/admin/events/%d/active shows it): %w", e.ID, e.ID, err)
			}
			got, err := a.GetEventWithResponse(ctx, e.ID)
			if err := a.check(got, err); err != nil {
				return fmt.Errorf("event %d was created and activated, but reading it back failed: %w", e.ID, err)
			}
			if e, err = decoded(got.JSON200); err != nil {
				return err
			}
			raw = got.Body
		}
		if out.json {
			return out.rawJSON(raw)
		}
		return printEvent(out, e)
	}
}

// readEventFile reads name, or standard input for "-".
func readEventFile(name string) ([]byte, error) {
	r := adminStdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, usagef("-f: %v", err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxEventFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %v", name, err)
	}
	if len(b) > maxEventFile {
		return nil, usagef("-f %s: over %d bytes; an event's JSON is far smaller", name, maxEventFile)
	}
	return b, nil
}

// printEvent prints the event's line, then one line per market with its
// pool: the ids a creator or a trader needs next.
func printEvent(out *adminOutput, e *client.Event) error {
	state := "hidden from the feed until activated"
	if e.IsActive {
		state = "active, in the feed"
	}
	fmt.Fprintf(out.w, "Event %d %q, owned by user %d: %s.\n\n", e.ID, e.Name, e.CreatorID, state)
	var rows [][]string
	for _, p := range e.Pools {
		for _, m := range p.Markets {
			rows = append(rows, []string{itoa(p.ID), p.Name, yesNo(p.Exclusive), itoa(m.ID), m.Name,
				strconv.FormatFloat(m.YesProbability, 'f', 4, 64), stamp(p.FinishAt)})
		}
	}
	return out.table([]string{"POOL", "POOL_NAME", "EXCLUSIVE", "MARKET", "MARKET_NAME", "YES_PROBABILITY", "FINISH_AT"}, rows...)
}
