//go:build unix

package bench

import "syscall"

// fdLimit returns how many files the process may open (the soft
// RLIMIT_NOFILE, which Go raises to the hard limit at start-up), or 0 if
// unknown.
func fdLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur > 1<<30 {
		return 0
	}
	return int(r.Cur)
}
