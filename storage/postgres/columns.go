package postgres

import (
	"strconv"
	"strings"
)

// A column is one column of the rows a statement reads or writes many at
// a time, each column as an array parameter. The tables of them in the
// row files are the one place that lists a table's columns; the functions
// below make the parts of statements from them when the package is
// initialized.
type column struct {
	name string
	// typ is the SQL type of the column's elements in its array
	// parameter: unnest($n::typ[]).
	typ string
	// null is the SQL zero value that stands for NULL on the Go side
	// ("0", "''"); empty when Go keeps NULL as nil or it does not occur.
	null string
	// mutable columns change after the row is written.
	mutable bool
}

// selectList lists the columns of table alias a to read, NULL read as the
// column's zero value: "a.id, COALESCE(a.partner_id, 0), ...".
func selectList(a string, cols []column) string {
	return join(cols, func(c column) string {
		if c.null != "" {
			return "COALESCE(" + a + "." + c.name + ", " + c.null + ")"
		}
		return a + "." + c.name
	})
}

// valueList lists the columns of alias a as values to write, the zero
// value written as NULL: "a.user_id, NULLIF(a.partner_id, 0), ...".
func valueList(a string, cols []column) string {
	return join(cols, func(c column) string {
		if c.null != "" {
			return "NULLIF(" + a + "." + c.name + ", " + c.null + ")"
		}
		return a + "." + c.name
	})
}

// nameList lists the columns' names: "id, user_id, ...".
func nameList(cols []column) string {
	return join(cols, func(c column) string { return c.name })
}

// setList assigns each column its value from alias a:
// "shares = a.shares, ...".
func setList(a string, cols []column) string {
	return join(cols, func(c column) string { return c.name + " = " + a + "." + c.name })
}

// unnest turns the array parameters $first, $first+1, ... of the
// columns into rows: "unnest($first::bigint[], ...)".
func unnest(first int, cols []column) string {
	i := first
	return "unnest(" + join(cols, func(c column) string {
		p := "$" + strconv.Itoa(i) + "::" + c.typ + "[]"
		i++
		return p
	}) + ")"
}

// onlyMutable returns the columns that change after the row is written.
func onlyMutable(cols []column) []column {
	var out []column
	for _, c := range cols {
		if c.mutable {
			out = append(out, c)
		}
	}
	return out
}

func join(cols []column, f func(column) string) string {
	s := make([]string, len(cols))
	for i, c := range cols {
		s[i] = f(c)
	}
	return strings.Join(s, ", ")
}
