package server

import (
	"runtime/debug"
	"strconv"
)

// BuildInfo names the running build: what `predictkit version`, the
// predictkit_build_info gauge and the start-up log line all tell.
type BuildInfo struct {
	// Version is the main module's version ("v0.1.0" when built with
	// go install …@v0.1.0), or "(devel)" for a build from a working copy.
	Version string
	// Revision is the VCS commit the binary was built from, or "unknown"
	// when the build recorded none (go run, go test, a build outside a
	// repository or with -buildvcs=false).
	Revision string
	// Modified is true when the working copy had uncommitted changes.
	Modified bool
	// Time is the commit's time (RFC 3339), or "".
	Time string
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string
}

// ReadBuild reads the build information the Go toolchain embeds in the
// binary (runtime/debug.ReadBuildInfo).
func ReadBuild() BuildInfo {
	b := BuildInfo{Version: "(devel)", Revision: "unknown"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.GoVersion = bi.GoVersion
	if bi.Main.Version != "" {
		b.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if s.Value != "" {
				b.Revision = s.Value
			}
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "vcs.time":
			b.Time = s.Value
		}
	}
	return b
}

// ModifiedLabel is Modified as a label value: "true" or "false".
func (b BuildInfo) ModifiedLabel() string { return strconv.FormatBool(b.Modified) }
