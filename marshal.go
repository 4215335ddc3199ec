package idgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/idgenkit/idgen/internal/echo"
)

// AppendText appends the canonical text to dst (encoding.TextAppender).
func (id ID) AppendText(dst []byte) ([]byte, error) {
	if id.scheme == nil {
		return dst, ErrNoScheme
	}
	return id.text(dst), nil
}

// MarshalText returns the canonical text.
func (id ID) MarshalText() ([]byte, error) { return id.AppendText(nil) }

// UnmarshalText parses the scheme's canonical text into id, keeping id's
// scheme (see Scheme.Zero). An ID without a scheme gives ErrNoScheme,
// naming the TypedID and Scheme.Zero() forms that decode; id is then
// unchanged.
func (id *ID) UnmarshalText(text []byte) error {
	s := id.scheme
	if s == nil {
		return noScheme("decode " + quoteInput(text))
	}
	n, err := s.Parse(string(text))
	if err != nil {
		return err
	}
	*id = n
	return nil
}

// noScheme is the error of decoding into an ID without a scheme: what was
// refused, and the two forms that decode.
func noScheme(what string) error {
	return fmt.Errorf("%w: cannot %s into an idgen.ID without one; decode into an idgen.TypedID of its scheme (such as idgen.TypedID[strategies.UUIDv7]) or into Scheme.Zero()", ErrNoScheme, what)
}

// Set parses text as UnmarshalText does, keeping id's scheme, so that *ID
// is a flag.Value whose scheme is fixed up front by the value the flag
// starts from: Scheme.Zero() for a flag without a default (shown as the
// scheme's all-zero text, 0 for 64-bit schemes), or a default ID of the
// scheme (a *TypedID is a flag.Value whose zero value is ready). Errors are
// Scheme.Parse's (wrapping ErrSyntax or ErrOutOfRange, quoting the text),
// or ErrNoScheme for an ID without a scheme; on error id is unchanged.
func (id *ID) Set(text string) error { return id.UnmarshalText([]byte(text)) }

// MarshalJSON encodes the ID as a JSON string of its canonical text, so that
// 64-bit values survive JavaScript's doubles (2^53-1).
func (id ID) MarshalJSON() ([]byte, error) {
	if id.scheme == nil {
		return []byte("null"), nil
	}
	dst := append(make([]byte, 0, 48), '"')
	dst = id.text(dst)
	return append(dst, '"'), nil
}

// UnmarshalJSON accepts a JSON string of the canonical text or, for 8-byte
// schemes, a JSON number up to 2^53 (MaxJSONNumber). A string's escapes
// (\u0039, \/) are decoded before the text is read. null leaves id
// unchanged. Errors are UnmarshalText's; ErrOutOfRange (an ErrInvalid) for
// a bare number above 2^53, which JavaScript cannot hold exactly (send it
// as a string);
// ErrSyntax for a string that is not valid JSON.
func (id *ID) UnmarshalJSON(data []byte) error {
	switch {
	case string(data) == "null":
		return nil
	case len(data) >= 2 && data[0] == '"' && data[len(data)-1] == '"':
		text := data[1 : len(data)-1]
		if bytes.IndexByte(text, '\\') < 0 { // no escapes: the text as it is
			return id.UnmarshalText(text)
		}
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("%w: %s is not a valid JSON string", ErrSyntax, quoteInput(data))
		}
		return id.UnmarshalText([]byte(s))
	case id.scheme != nil && id.scheme.Size != 8:
		return fmt.Errorf("%w: %s ID must be a JSON string, got %s", ErrSyntax, id.scheme.Name, quoteInput(data))
	case id.scheme == nil:
		return noScheme("decode " + quoteInput(data))
	}
	if v, err := ParseUint64(data); err == nil && v > MaxJSONNumber { // digits only: safe to echo
		return fmt.Errorf("%w: JSON number %s is above 2^53 (%d), the largest integer a JavaScript number holds exactly: it may have been rounded from another ID; send 64-bit IDs as JSON strings (\"%s\")", ErrOutOfRange, data, uint64(MaxJSONNumber), data)
	}
	return id.UnmarshalText(data)
}

// MaxJSONNumber is 2^53, the largest bare JSON number UnmarshalJSON takes
// as a 64-bit ID: every integer up to it is exact in a JavaScript number
// (an IEEE 754 double), so a number above it may have been rounded.
const MaxJSONNumber = 1 << 53

// quoteInput quotes text for an error message, cut to about 64 bytes.
func quoteInput(text []byte) string { return strconv.Quote(echo.Cut(string(text))) }
