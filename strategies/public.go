package strategies

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/public"
)

// EnvPublicKey is the default key_env: the name Options.LookupKey is asked
// for, the environment variable idgen's CLI reads the keys of public IDs
// from (public.ParseKeys's form: 64 hex digits, or ID:HEX,ID:HEX).
const EnvPublicKey = "IDGEN_PUBLIC_KEY"

func init() {
	register(&Strategy{
		Name:     "public",
		External: true, // needs a key
		Doc:      "IDs safe to show the public: another spec's 64- or 128-bit IDs encrypted (FF1-AES-256, reversible with the key), a key ID first",
		Keys: []Key{
			{Name: "inner", Doc: "the spec whose IDs are encrypted, URL-escaped (snowflake%3Fpreset%3Dtwitter); required"},
			{Name: "key_env", Doc: "environment variable holding the key: 64 hex digits, or ID:HEX,ID:HEX to rotate (the first issues); default " + EnvPublicKey},
			{Name: "key_file", Doc: "file holding the keys instead of key_env: 64 hex digits, or ID:HEX entries, one a line or comma-separated (the first issues); # starts a comment line"},
			{Name: EncodingKey, Doc: "text of the encrypted bits: " + "crockford (default), crockford-check, base58, base62, base36, hex"},
			{Name: "tweak", Doc: "FF1 tweak, at most 64 bytes of text (a type name, or a TypeID inner's prefix): the same inner ID under two tweaks gives unrelated public IDs; public, not a secret; default empty, as public IDs issued before tweaks existed"},
		},
		Build: func(ctx context.Context, p *Params) (idgen.Generator, error) {
			cfg, inner, err := publicConfig(p)
			if err != nil {
				return nil, err
			}
			g, err := p.opts.New(ctx, inner)
			if err != nil {
				return nil, innerError(inner.String(), err)
			}
			pg, err := public.New(g, cfg)
			if err != nil {
				if c, ok := g.(io.Closer); ok {
					c.Close()
				}
				return nil, fmt.Errorf("%w: %w", ErrSpec, err)
			}
			return pg, nil
		},
		Scheme: func(p *Params) (*idgen.Scheme, error) {
			cfg, inner, err := publicConfig(p)
			if err != nil {
				return nil, err
			}
			s, err := p.opts.SchemeOf(inner)
			if err != nil {
				return nil, innerError(inner.String(), err)
			}
			ps, err := public.NewScheme(s, cfg)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrSpec, err)
			}
			return ps, nil
		},
		// The inner IDs: a public ID decrypts to them, so two generators
		// over one inner keyspace hand out the same keys.
		Keyspace: func(p *Params) (string, error) {
			_, inner, err := publicConfig(p)
			if err != nil {
				return "", err
			}
			return p.opts.Keyspace(inner)
		},
	})
}

// innerError is err about a public spec's inner spec.
func innerError(inner string, err error) error {
	return fmt.Errorf("%w: public: inner=%s: %w", ErrSpec, quote(inner), err)
}

// publicConfig reads a public spec's keys, encoding and tweak, and its
// inner spec, parsed (CheckSpec).
func publicConfig(p *Params) (public.Config, Spec, error) {
	inner := p.String("inner", "")
	if inner == "" {
		return public.Config{}, Spec{}, fmt.Errorf("%w: public: inner is required: the URL-escaped spec whose IDs to encrypt, e.g. inner=snowflake%%3Fpreset%%3Dtwitter", ErrSpec)
	}
	encName, err := p.Choice(EncodingKey, "crockford", "crockford", "crockford-check", "base58", "base62", "base36", "hex")
	if err != nil {
		return public.Config{}, Spec{}, err
	}
	enc, err := public.LookupEncoding(encName)
	if err != nil {
		return public.Config{}, Spec{}, err
	}
	keys, err := publicKeys(p)
	if err != nil {
		return public.Config{}, Spec{}, fmt.Errorf("%w: %w", ErrSpec, err)
	}
	tweak := p.String("tweak", "")
	if len(tweak) > public.MaxTweakSize {
		return public.Config{}, Spec{}, p.bad("tweak", tweak, fmt.Sprintf("at most %d bytes", public.MaxTweakSize))
	}
	spec, err := CheckSpec(inner)
	if err != nil {
		return public.Config{}, Spec{}, innerError(inner, err)
	}
	return public.Config{Keys: keys, Encoding: enc, Tweak: []byte(tweak)}, spec, nil
}

// publicKeys reads a public spec's keys from key_file, or else from the
// variable key_env names (through Options.LookupKey). Both given is an
// error. Errors wrap public.ErrKey and name the file or variable, never
// the key.
func publicKeys(p *Params) ([]public.Key, error) {
	if file := p.String("key_file", ""); file != "" {
		if p.Has("key_env") {
			return nil, fmt.Errorf("%w: key_file and key_env both name the key: give one", public.ErrKey)
		}
		text, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%w: key_file: %w", public.ErrKey, err)
		}
		return public.ParseKeys("key_file "+file, string(text))
	}
	env := p.String("key_env", EnvPublicKey)
	if p.opts.LookupKey == nil {
		return nil, fmt.Errorf("%w: public: no key source (the program sets strategies.Options.LookupKey, or the spec key_file=)", public.ErrKey)
	}
	text, _ := p.opts.LookupKey(env)
	return public.ParseKeys(env, text)
}
