//go:build !unix

package bench

// fdLimit returns 0: the limit is unknown here.
func fdLimit() int { return 0 }
