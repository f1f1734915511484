package server

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// openAPIYAML is the API document, kept beside the code and checked
// against real responses by the tests.
//
//go:embed openapi.yaml
var openAPIYAML []byte

// OpenAPIYAML returns the OpenAPI 3.0 document as written (YAML).
func OpenAPIYAML() []byte { return openAPIYAML }

// OpenAPIJSON returns the OpenAPI 3.0 document as JSON, as served at
// GET /api/v1/openapi.json.
var OpenAPIJSON = sync.OnceValues(func() ([]byte, error) {
	doc, err := OpenAPIDocument()
	if err != nil {
		return nil, err
	}
	return json.Marshal(doc)
})

// OpenAPIDocument parses and validates the document.
func OpenAPIDocument() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(openAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("openapi: load: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi: invalid document: %w", err)
	}
	return doc, nil
}
