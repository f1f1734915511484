package main

import (
	"fmt"
	"io"

	"github.com/predictkit/predictkit/server"
)

// versionCmd prints the build: the module version, the VCS revision (with
// "(modified)" for a working copy with uncommitted changes) and its time,
// and the Go version; the same as predictkit_build_info and the start-up
// log line.
func versionCmd(stdout io.Writer) int {
	b := server.ReadBuild()
	rev := b.Revision
	if b.Modified {
		rev += " (modified)"
	}
	fmt.Fprintf(stdout, "version:  %s\nrevision: %s\n", b.Version, rev)
	if b.Time != "" {
		fmt.Fprintf(stdout, "time:     %s\n", b.Time)
	}
	fmt.Fprintf(stdout, "go:       %s\n", b.GoVersion)
	return 0
}
