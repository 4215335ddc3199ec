// Package serving holds the rules the HTTP and gRPC transports (packages
// httpapi and grpcapi) share, so that both give the same answer to the
// same request: how an ID to decode is checked, which issuing errors
// waiting does not mend, and how long a request's count takes to issue.
package serving

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/echo"
)

// DefaultMaxCount is the largest count a request may ask for when the
// transport's Options leave MaxCount zero.
const DefaultMaxCount = 10_000

// DefaultName is the name of the default generator when the transport's
// Options leave Default empty and there is more than one generator.
const DefaultName = "default"

// UUIDVersion returns the version (the high nibble of byte 6, RFC 9562
// section 4.2) that every ID of s carries when s is the scheme of one UUID
// version (uuidv1, uuidv4, uuidv6, uuidv7), else 0: the plain "uuid"
// scheme and every other scheme accept any bytes their Parse does.
func UUIDVersion(s *idgen.Scheme) byte {
	if s.Size != 16 || s.Column != idgen.ColumnUUID {
		return 0
	}
	switch s.Name {
	case "uuidv1":
		return 1
	case "uuidv4":
		return 4
	case "uuidv6":
		return 6
	case "uuidv7":
		return 7
	}
	return 0
}

// Decode parses text as an ID of generator name, whose scheme is s: s's
// Parse, then for a UUID scheme of one version the version, so that a v4
// UUID is not read as a v7's timestamp. The error's text is the answer
// both transports send (Classify: KindInvalid, HTTP 400, gRPC
// InvalidArgument): the input cut to about 64 bytes, the generator and
// what was wrong. It matches idgen.ErrInvalid.
func Decode(s *idgen.Scheme, name, text string) (idgen.ID, error) {
	id, err := s.Parse(text)
	if err != nil {
		return idgen.ID{}, Invalid(fmt.Sprintf("%q is not a %s ID of generator %q: %s", echo.Cut(text), s.Name, name, ClipEcho(err.Error(), text)))
	}
	if v := UUIDVersion(s); v != 0 {
		if got := id.Bytes()[6] >> 4; got != v {
			return idgen.ID{}, Invalid(fmt.Sprintf("%q is a version %d UUID; generator %q issues version %d", echo.Cut(text), got, name, v))
		}
	}
	return id, nil
}

// ClipEcho returns msg, an error message about input, for a message that
// names input already: input quoted becomes "it", input bare is cut, and
// msg itself is cut to a few echoes' length.
func ClipEcho(msg, input string) string {
	msg = strings.ReplaceAll(msg, strconv.Quote(input), "it")
	if len(input) > echo.Max {
		msg = strings.ReplaceAll(msg, input, echo.Cut(input))
	}
	return echo.CutN(msg, 4*echo.Max)
}

// Permanent reports whether err, an issuing error, is one that waiting
// does not mend: a clock outside the layout's lifetime (before its epoch or
// past its end), or an error with a Permanent method that says so (a
// segment biz tag whose every ID was handed out, segment.ErrExhausted).
// HTTP answers it 503 without Retry-After, gRPC FailedPrecondition.
func Permanent(err error) bool {
	var p interface{ Permanent() bool }
	return errors.Is(err, idgen.ErrLayoutExhausted) || errors.Is(err, idgen.ErrBeforeEpoch) || errors.As(err, &p) && p.Permanent()
}

// EstimateIssue times one NextN of min(count, chunk) IDs of g on clock
// (nil: the system clock) and returns how long count IDs would take to
// issue at that pace, chunk by chunk, as the transports issue them: the
// time of one chunk times the chunks of count. The IDs of the probe are
// dropped (a gap, never a duplicate). It returns g's error when the probe
// fails.
func EstimateIssue(ctx context.Context, g idgen.Generator, count, chunk int, clock idgen.Clock) (time.Duration, error) {
	clock = idgen.ClockOr(clock)
	n := min(count, chunk)
	ids := make([]idgen.ID, n)
	t0 := clock.Now()
	if _, err := idgen.NextN(ctx, g, ids); err != nil {
		return 0, err
	}
	per := clock.Now().Sub(t0)
	chunks := (count + n - 1) / n
	return per * time.Duration(chunks), nil
}
