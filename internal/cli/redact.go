package cli

import "github.com/idgenkit/idgen/internal/redact"

// maskedError is an error whose message has its passwords masked
// (redact.Spec); errors.Is and As still see the error it wraps.
type maskedError struct{ err error }

func (e maskedError) Error() string { return redact.Spec(e.err.Error()) }
func (e maskedError) Unwrap() error { return e.err }

// maskSecrets returns err with its passwords masked in its message, or nil.
func maskSecrets(err error) error {
	if err == nil {
		return nil
	}
	return maskedError{err}
}
