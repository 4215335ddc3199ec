// Package public makes IDs safe to show the public: a keyed, reversible
// format-preserving encryption of any 64- or 128-bit ID, text encodings for
// any ID (Crockford base32 with an optional mod-37 check symbol, base58,
// base62, base36, hex and bwmarrin/snowflake's forms), and TypeID (spec
// 0.3.0) text.
//
// The encryption is the package's own FF1 (NIST SP 800-38G) over AES-256,
// in radix 16 over the ID's hex digits: exactly the ID's width, so 2^64 or
// 2^128 values, permuted. Its numbers live in uint64 pairs, and P and the
// tweak's blocks of the CBC-MAC are encrypted once per key and tweak, so
// each of its 10 rounds costs one AES block; Generator.AppendNext writes a
// public ID into a caller's buffer without allocating. It is checked
// against NIST's nine FF1 samples and, over random inputs, against
// github.com/capitalone/fpe, the library public IDs used before (IDs it
// issued decode unchanged).
//
// A Config's Tweak separates domains: the same inner ID under two tweaks
// (two types of object) gives unrelated public IDs. The tweak is public;
// the key is the secret.
//
// The package takes its keys as bytes in a Config; it reads no environment
// variable and prints nothing.
package public
