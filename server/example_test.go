package server_test

import (
	"fmt"
	"io"
	"net/http/httptest"

	"github.com/predictkit/predictkit/server"
)

// Build assembles the whole API on the in-memory store without listening,
// which is how tests and embedders drive it.
func ExampleBuild() {
	cfg := server.DefaultConfig()
	cfg.Demo = false
	app, err := server.Build(cfg)
	if err != nil {
		panic(err)
	}
	resp, err := app.Test(httptest.NewRequest("GET", "/api/v1/pools/1", nil))
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body))
	// Output:
	// 404 {"error":"pool_not_found"}
}
