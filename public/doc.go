// Package public makes IDs safe to show the public: a keyed, reversible
// format-preserving encryption of any 64- or 128-bit ID (NIST SP 800-38G
// FF1 over AES from github.com/capitalone/fpe, radix 16 over the ID's hex
// digits: exactly the ID's width), text encodings for
// any ID (Crockford base32 with an optional mod-37 check symbol, base58,
// base62, base36, hex and bwmarrin/snowflake's forms), and TypeID
// (spec 0.3.0) text.
//
// The package takes its keys as bytes in a Config; it reads no environment
// variable and prints nothing.
package public
