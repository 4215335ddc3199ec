// Package redistls reads a redis:// or rediss:// URL with package
// storetls's keys into go-redis's Options. It is apart from storetls so
// that the programs that use TLS without Redis (package client) do not
// link go-redis.
package redistls

import (
	"fmt"
	"net/url"

	"github.com/idgenkit/idgen/internal/errclass"
	"github.com/idgenkit/idgen/internal/storetls"
	"github.com/redis/go-redis/v9"
)

// ErrOption marks an error of RedisOptions that lies in the URL's options
// (exit 2), not in reaching the server.
var ErrOption = errclass.Invalid("bad store option")

// RedisOptions parses a redis:// or rediss:// URL (go-redis's form,
// redis://[user[:password]@]host:port/db) with the keys of this package:
// tls_ca, tls_cert, tls_key and tls_server_name need rediss://;
// password_file sets the password of the URL's user (an ACL user; no user
// is Redis's "default"). Errors wrap ErrOption and never quote the
// password.
func RedisOptions(rawURL string) (*redis.Options, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOption, err)
	}
	q := u.Query()
	o, err := storetls.Take(q)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOption, err)
	}
	if o.TLS() && u.Scheme != "rediss" {
		return nil, fmt.Errorf("%w: tls_ca, tls_cert and tls_server_name need rediss:// (TLS), not %s://", ErrOption, u.Scheme)
	}
	pw, err := o.Password()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOption, err)
	}
	if _, set := u.User.Password(); set && pw != "" {
		return nil, fmt.Errorf("%w: a password in the URL and password_file: give one", ErrOption)
	}
	u.RawQuery = q.Encode()
	opt, err := redis.ParseURL(u.String())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOption, err)
	}
	if pw != "" {
		opt.Password = pw
	}
	if opt.TLSConfig != nil {
		c, err := o.Config()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrOption, err)
		}
		if c.ServerName == "" {
			c.ServerName = opt.TLSConfig.ServerName
		}
		opt.TLSConfig = c
	}
	return opt, nil
}
