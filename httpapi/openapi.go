package httpapi

import _ "embed"

// openAPI is the OpenAPI 3 document of the API, served at
// /api/v1/openapi.json. Keep it in step with the routes and the contract.
//
//go:embed openapi.json
var openAPI []byte

// OpenAPI returns a copy of the OpenAPI 3 document the handler serves.
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }
