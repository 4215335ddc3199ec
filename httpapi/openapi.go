package httpapi

import (
	"bytes"
	_ "embed"
	"strconv"
)

// openAPI is the OpenAPI 3 document of the API, served at
// /api/v1/openapi.json. Keep it in step with the routes and the contract.
//
//go:embed openapi.json
var openAPI []byte

// OpenAPI returns a copy of the OpenAPI 3 document the handler serves.
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

// openAPIFor returns the OpenAPI document with maxCount as the count's
// maximum.
func openAPIFor(maxCount int) []byte {
	if maxCount == DefaultMaxCount {
		return openAPI
	}
	return bytes.Replace(openAPI, []byte(`"maximum": 10000,`), []byte(`"maximum": `+strconv.Itoa(maxCount)+`,`), 1)
}
