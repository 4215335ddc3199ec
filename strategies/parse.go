package strategies

import (
	"fmt"

	"github.com/idgenkit/idgen"
)

// Parse detects the scheme of text and decodes it. Decimal text is a 64-bit
// ID of the default Snowflake layout; ParseWith names another.
func Parse(text string) (idgen.ID, error) {
	return ParseWith(text, "")
}

// ParseWith decodes text as an ID of the scheme that spec's generator issues;
// an empty spec detects the scheme as Parse does.
func ParseWith(text, spec string) (idgen.ID, error) {
	if spec == "" {
		spec = "snowflake"
	}
	s, err := SchemeOf(spec)
	if err != nil {
		return idgen.ID{}, err
	}
	id, err := s.Parse(text)
	if err != nil {
		return idgen.ID{}, fmt.Errorf("%w (as %s)", err, spec)
	}
	return id, nil
}
