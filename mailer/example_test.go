package mailer_test

import (
	"fmt"

	"github.com/predictkit/predictkit/mailer"
)

// An SMTP URL names the server, the credentials, the sender and how TLS
// is used; its description for the logs leaves the password out.
func ExampleParseURL() {
	for _, u := range []string{
		"smtp://mailer:s3cret@smtp.example.com?from=noreply@example.com",
		"smtps://mailer:s3cret@smtp.example.com?from=Predictkit%20%3Cnoreply@example.com%3E",
		"smtp://relay.internal:25?from=noreply@example.com&starttls=required",
	} {
		c, err := mailer.ParseURL(u)
		if err != nil {
			panic(err)
		}
		fmt.Println(c)
	}
	// Output:
	// smtp://mailer@smtp.example.com:587 (STARTTLS opportunistic) from <noreply@example.com>
	// smtps://mailer@smtp.example.com:465 (implicit TLS) from "Predictkit" <noreply@example.com>
	// smtp://relay.internal:25 (STARTTLS required) from <noreply@example.com>
}
