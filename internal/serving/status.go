package serving

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/idgenkit/idgen"
)

// A Kind is a class of error a transport answers, with the same HTTP
// status and gRPC code on both (Class). The first NumIssueKinds are the
// kinds of issuing errors, counted per generator by that name
// (KindNames): their order is the metrics' label order.
type Kind int

const (
	KindClockRollback Kind = iota // idgen.ErrClockRollback: 503, Unavailable, retry after the drift
	KindLeaseLost                 // a worker-ID lease lost or none free: 503, Unavailable
	KindUnavailable               // idgen.ErrUnavailable, idgen.ErrClosed: 503, Unavailable
	KindTimeout                   // the request's timeout or cancellation: 503, Unavailable
	KindLifetime                  // Permanent: 503 without Retry-After, FailedPrecondition
	KindOther                     // anything else: 500, Internal, the text kept for the log
	NumIssueKinds                 // the issuing kinds above

	// KindInvalid is a request the caller must change (a count out of
	// range, an ID that does not parse): 400, InvalidArgument. Its errors
	// match idgen.ErrInvalid.
	KindInvalid = NumIssueKinds
	// KindNotFound is a request for a generator not served: 404, NotFound.
	KindNotFound = NumIssueKinds + 1
)

// KindNames are the issuing kinds' names, the value of the metrics'
// "kind" label.
var KindNames = [NumIssueKinds]string{"clock_rollback", "lease_lost", "unavailable", "timeout", "layout_lifetime", "other"}

// gRPC codes, as google.golang.org/grpc/codes numbers them: kept as
// numbers here so that package httpapi does not link gRPC (a test checks
// them against the codes package).
const (
	CodeInvalidArgument    uint32 = 3
	CodeNotFound           uint32 = 5
	CodeFailedPrecondition uint32 = 9
	CodeInternal           uint32 = 13
	CodeUnavailable        uint32 = 14
)

// A Class is how both transports answer a Kind of error.
type Class struct {
	HTTP  int    // the HTTP status
	GRPC  uint32 // the gRPC code (google.golang.org/grpc/codes.Code)
	Retry bool   // 503 carries Retry-After, Unavailable a RetryInfo
}

// classes is the one table of answers.
var classes = [...]Class{
	KindClockRollback: {http.StatusServiceUnavailable, CodeUnavailable, true},
	KindLeaseLost:     {http.StatusServiceUnavailable, CodeUnavailable, true},
	KindUnavailable:   {http.StatusServiceUnavailable, CodeUnavailable, true},
	KindTimeout:       {http.StatusServiceUnavailable, CodeUnavailable, true},
	KindLifetime:      {http.StatusServiceUnavailable, CodeFailedPrecondition, false},
	KindOther:         {http.StatusInternalServerError, CodeInternal, false},
	KindInvalid:       {http.StatusBadRequest, CodeInvalidArgument, false},
	KindNotFound:      {http.StatusNotFound, CodeNotFound, false},
}

// ClassOf returns k's answer.
func ClassOf(k Kind) Class { return classes[k] }

// An Answer is what a transport sends for an error: its kind and class,
// how long a client should wait before trying again (zero when the class
// has no retry), and the text to send. An internal error's text is
// replaced (the server's log keeps it); a caller's mistake keeps its own.
type Answer struct {
	Kind  Kind
	Class Class
	Retry time.Duration
	Msg   string
}

// InternalMsg is the text sent in place of an internal error's.
const InternalMsg = "internal error issuing IDs; see the server log"

// Classify returns the answer to err, a request's error: an error of this
// package's request checks (Invalid, Set.Unknown) keeps its kind; an
// issuing error is a clock rollback (retry after its drift, at least a
// second), a lost lease, the store unavailable (idgen.ErrUnavailable), a
// timeout, a lifetime over (Permanent) or else internal. An issuing error
// of class idgen.ErrInvalid that is not Permanent (a biz tag the store
// does not hold) is the server's configuration, not the request: internal.
func Classify(err error) Answer {
	var re *requestError
	if errors.As(err, &re) {
		return Answer{Kind: re.kind, Class: classes[re.kind], Msg: re.msg}
	}
	k := issueKind(err)
	a := Answer{Kind: k, Class: classes[k], Msg: err.Error()}
	if a.Class.Retry {
		a.Retry = time.Second
		var rb *idgen.ClockRollbackError
		if errors.As(err, &rb) {
			a.Retry = max(a.Retry, rb.Drift)
		}
	}
	if k == KindOther {
		a.Msg = InternalMsg
	}
	return a
}

// issueKind classifies an issuing error.
func issueKind(err error) Kind {
	switch {
	case errors.Is(err, idgen.ErrClockRollback):
		return KindClockRollback
	case errors.Is(err, idgen.ErrLeaseLost), errors.Is(err, idgen.ErrNoWorkerIDs):
		return KindLeaseLost
	case errors.Is(err, idgen.ErrUnavailable), errors.Is(err, idgen.ErrClosed):
		return KindUnavailable
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return KindTimeout
	case Permanent(err):
		return KindLifetime
	}
	return KindOther
}

// requestError is an answer of the request checks: a kind and a text.
type requestError struct {
	kind Kind
	msg  string
}

func (e *requestError) Error() string { return e.msg }

// Unwrap makes an invalid request match idgen.ErrInvalid.
func (e *requestError) Unwrap() error {
	if e.kind == KindInvalid {
		return idgen.ErrInvalid
	}
	return nil
}

// Invalid returns msg as a request the caller must change: Classify
// answers it KindInvalid (400, InvalidArgument), and it matches
// idgen.ErrInvalid.
func Invalid(msg string) error { return &requestError{KindInvalid, msg} }
