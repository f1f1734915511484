// Package client is a typed Go client of the predictkit HTTP API,
// generated from the server's OpenAPI document (server/openapi.yaml) by
// oapi-codegen, with a thin hand-written layer: authentication options
// and an error type for the documented {"error", "detail"} answers.
//
// NewClientWithResponses returns a client whose methods are named after
// the document's operations (BuyWithResponse, PartnerBetWithResponse,
// AdminCreditWithResponse, …) and decode each documented answer into a
// typed field (JSON200, JSON400, …). Check turns an answer that is not
// 2xx into an *APIError:
//
//	c, err := client.NewClientWithResponses("http://127.0.0.1:8080",
//		client.WithPartnerKey(key),
//		client.WithHTTPClient(&http.Client{Timeout: 10 * time.Second}))
//	if err != nil {
//		return err
//	}
//	res, err := client.Check(c.PartnerBetWithResponse(ctx, client.PartnerBetRequest{
//		ExternalUserID: "customer-42",
//		MarketID:       marketID,
//		Side:           client.PartnerBetRequestSideYes,
//		AmountKopecks:  20_000,
//		ClientBetID:    "bet-0001",
//	}))
//	if err != nil {
//		return err // an *APIError when the server refused
//	}
//	fmt.Println(res.JSON200.SharesDelta)
//
// Authentication follows the document's security schemes: a user's access
// token (from Register or Login) and the operator's admin token go in
// Authorization as Bearer tokens (WithBearerToken, or BearerToken for one
// request), a partner's key in X-Partner-Key (WithPartnerKey, PartnerKey).
//
// Units are the API's: money in integer kopecks, shares as integers,
// probabilities as fractions. The server's rules are in docs/rules.md.
//
// The generated code (client.gen.go) is committed; after a change to
// server/openapi.yaml run
//
//	go generate ./client
//
// A test fails while the committed code differs from what the generator
// makes of the document.
package client

//go:generate go tool oapi-codegen -config oapi-codegen.yaml -o client.gen.go ../server/openapi.yaml
