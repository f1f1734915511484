package server_test

import (
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestOpenAPIDocumentForGeneratedClients checks the two things OpenAPI 3.0
// client generators rely on and CI's linter (redocly.yaml) also checks:
// every operation says which authentication it takes, an empty list for
// public ones, and every nullable schema has a type (3.0 tools ignore
// nullable without one, so the field would be generated as non-null).
// This runs without npm; the linter in .ci/run covers the rest.
func TestOpenAPIDocumentForGeneratedClients(t *testing.T) {
	d, _ := openAPI(t)
	t.Run("every operation declares its security, an empty list when it is public", func(t *testing.T) {
		if d.Security != nil {
			t.Skip("the document declares security at the root")
		}
		for path, item := range d.Paths.Map() {
			for method, op := range item.Operations() {
				if op.Security == nil {
					t.Errorf("%s %s (%s) declares no security; a public operation says security: []", method, path, op.OperationID)
				}
			}
		}
	})
	t.Run("every nullable schema has a type", func(t *testing.T) {
		seen := map[*openapi3.Schema]bool{}
		var walk func(where string, s *openapi3.SchemaRef)
		walk = func(where string, ref *openapi3.SchemaRef) {
			if ref == nil || ref.Value == nil || seen[ref.Value] {
				return
			}
			s := ref.Value
			seen[s] = true
			if s.Nullable && (s.Type == nil || len(*s.Type) == 0) {
				t.Errorf("%s is nullable without a type, which OpenAPI 3.0 tools ignore", where)
			}
			for name, p := range s.Properties {
				walk(where+"."+name, p)
			}
			walk(where+"[]", s.Items)
			if s.AdditionalProperties.Schema != nil {
				walk(where+"{}", s.AdditionalProperties.Schema)
			}
			for _, list := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
				for _, sub := range list {
					walk(where, sub)
				}
			}
			walk(where+"!", s.Not)
		}
		for name, s := range d.Components.Schemas {
			walk(name, s)
		}
		for name, r := range d.Components.Responses {
			for ct, mt := range r.Value.Content {
				walk("response "+name+" "+ct, mt.Schema)
			}
		}
		for path, item := range d.Paths.Map() {
			for method, op := range item.Operations() {
				at := strings.Join([]string{method, path}, " ")
				for _, p := range op.Parameters {
					walk(at+" parameter "+p.Value.Name, p.Value.Schema)
				}
				if op.RequestBody != nil {
					for _, mt := range op.RequestBody.Value.Content {
						walk(at+" body", mt.Schema)
					}
				}
				for code, r := range op.Responses.Map() {
					for _, mt := range r.Value.Content {
						walk(at+" "+code, mt.Schema)
					}
				}
			}
		}
	})
}
