package idgen

import (
	"encoding/hex"
	"errors"
	"fmt"
)

// AppendUUIDText appends the 16 bytes b as RFC 9562 text,
// xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, lowercase.
func AppendUUIDText(dst, b []byte) []byte {
	var buf [36]byte
	hex.Encode(buf[0:8], b[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], b[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], b[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], b[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:36], b[10:16])
	return append(dst, buf[:]...)
}

// ParseUUIDText decodes 36-char RFC 9562 text (either case) into the 16 bytes b.
func ParseUUIDText(b, text []byte) error {
	if len(text) != 36 || text[8] != '-' || text[13] != '-' || text[18] != '-' || text[23] != '-' {
		return fmt.Errorf("%w: %q is not a 36-char UUID (8-4-4-4-12 hex digits)", ErrSyntax, text)
	}
	var compact [32]byte
	copy(compact[0:8], text[0:8])
	copy(compact[8:12], text[9:13])
	copy(compact[12:16], text[14:18])
	copy(compact[16:20], text[19:23])
	copy(compact[20:32], text[24:36])
	if _, err := hex.Decode(b[:16], compact[:]); err != nil {
		var bad hex.InvalidByteError // 32 digits: the only error Decode returns
		errors.As(err, &bad)
		return fmt.Errorf("%w: %q is not a UUID: %q is not a hex digit; want 8-4-4-4-12 hex digits (0-9, a-f)", ErrSyntax, text, rune(bad))
	}
	return nil
}
