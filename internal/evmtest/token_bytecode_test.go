package evmtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestTokenBytecodeIsCurrent compiles contracts/Token.sol again with the
// pinned solc-js (at PREDICTKIT_SOLCJS, which .ci/run installs) and checks
// that the committed Token.abi and Token.bin are what it makes: the chain
// runs exactly the source in the repository. Without solc-js it skips,
// saying so, unless PREDICTKIT_REQUIRE_SOLC=1 (CI), where it fails.
func TestTokenBytecodeIsCurrent(t *testing.T) {
	missing := func(why string) {
		t.Helper()
		if os.Getenv("PREDICTKIT_REQUIRE_SOLC") == "1" {
			t.Fatalf("%s, and PREDICTKIT_REQUIRE_SOLC=1", why)
		}
		t.Skipf("%s: the committed token is not checked against contracts/Token.sol (.ci/run installs solc-js)", why)
	}
	solcjs := os.Getenv("PREDICTKIT_SOLCJS")
	if solcjs == "" {
		missing("PREDICTKIT_SOLCJS is not set")
	}
	if _, err := os.Stat(filepath.Join(solcjs, "package.json")); err != nil {
		missing("PREDICTKIT_SOLCJS=" + solcjs + " holds no solc-js package")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("Node.js is not installed")
	}
	out := t.TempDir()
	cmd := exec.CommandContext(t.Context(), node, filepath.Join("contracts", "compile.js"), out)
	cmd.Env = append(os.Environ(), "PREDICTKIT_SOLCJS="+solcjs)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node contracts/compile.js: %v\n%s", err, msg)
	}
	for _, name := range []string{"Token.abi", "Token.bin"} {
		t.Run(name+" is what the compiler makes of Token.sol", func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(out, name))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join("contracts", name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("contracts/%s is not what contracts/Token.sol compiles to; run go generate ./internal/evmtest/ and commit the result", name)
			}
		})
	}
}
