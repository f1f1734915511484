package mailtest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/predictkit/predictkit/mailer"
	"github.com/predictkit/predictkit/mailer/mailtest"
)

// A test starts a server, sends through it and reads what arrived.
func Example() {
	srv, err := mailtest.Start()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	cfg, err := mailer.ParseURL(srv.URL("noreply@example.com"))
	if err != nil {
		panic(err)
	}
	if err := mailer.New(cfg).Send(context.Background(), mailer.Message{To: "ann@example.com", Subject: "Hello", Text: "Hi Ann"}); err != nil {
		panic(err)
	}
	m, err := srv.Next(10 * time.Second)
	if err != nil {
		panic(err)
	}
	fmt.Println(m.From, m.To, m.Header.Get("Subject"), m.Text)
	// Output: noreply@example.com [ann@example.com] Hello Hi Ann
}
