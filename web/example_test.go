package web_test

import (
	"fmt"
	"strings"
	"testing/fstest"

	"github.com/predictkit/predictkit/web"
)

// Load a small app and see how its files would be served: each with its
// content type, and the script compressed for a client that takes gzip
// but not Brotli.
func Example() {
	site, err := web.Load(fstest.MapFS{
		"index.html":     {Data: []byte(`<!doctype html><title>app</title><script type="module" src="/assets/app.js"></script>`)},
		"assets/app.js":  {Data: []byte(strings.Repeat("console.log('predictkit');\n", 40))},
		"assets/app.css": {Data: []byte("body { margin: 0 }\n")},
		"notes.txt":      {Data: []byte("not under assets/: never served")},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range site.Names() {
		fmt.Println(name, site.File(name).ContentType)
	}
	app := site.File("assets/app.js")
	body, enc := app.Encoding("gzip, deflate")
	fmt.Println(enc, len(body) < len(app.Body))
	// Output:
	// assets/app.css text/css; charset=utf-8
	// assets/app.js text/javascript; charset=utf-8
	// index.html text/html; charset=utf-8
	// gzip true
}
