// Package redact masks secrets in text the project prints or writes: DSN
// passwords inside strategy specs, DSN lists, URLs and messages.
package redact

import "github.com/idgenkit/idgen/internal/lazyre"

// Mask is what a password is replaced by, as url.URL.Redacted writes it.
const Mask = "xxxxx"

// notSlash is one character of an escaped value other than %2F.
const notSlash = `(?:[^%\s]|%[013-9a-f][0-9a-f]|%2[0-9a-e])`

// The forms masked, each raw and URL-escaped (as a spec's dsn= value may
// carry it). The password ends where the URL's authority does (/, ?, #,
// white space) at its last @, so a password holding an @ or : is masked
// whole; in an escaped value %2F ends it.
var (
	// scheme://user:PASS@host
	userinfoRE = lazyre.MustCompile(`(://[^:/?#@\s]*:)([^/?#\s]*)@`)
	// scheme%3A%2F%2Fuser%3APASS%40host
	userinfoEscRE = lazyre.MustCompile(`(?i)(%3A%2F%2F(?:[^%/?#&\s]|%[013-9a-f][0-9a-f]|%2[0-9a-e])*?%3A)((?:[^%/?#&\s]|%[013-9a-f][0-9a-f]|%2[0-9a-e])*)%40`)
	// go-sql-driver's user:PASS@tcp(host)/db, user:PASS@/db; PASS does not
	// start with // (that is a URL: scheme://user@/db)
	driverRE = lazyre.MustCompile(`((?:^|[\s=,;"'(])[^\s:/@,;=&"'?(]*:)(|/|[^/\s]\S*?|/[^/\s]\S*?)@((?:tcp|tcp4|tcp6|udp|unix)?\(|/)`)
	// user%3APASS%40tcp%28host%29%2Fdb; PASS does not start with %2F%2F
	driverEscRE = lazyre.MustCompile(`(?i)((?:^|[\s=,;"'(])[^\s%:/@,;=&"'?(]*%3A)(|%2F|` + notSlash + `\S*?|%2F` + notSlash + `\S*?)%40((?:tcp|tcp4|tcp6|udp|unix)?%28|%2F)`)
	// password=PASS, password='PA SS' (libpq key=value, URL query keys),
	// sslpassword=, db_password=, passwd=, pwd=
	keyRE = lazyre.MustCompile(`(?i)([a-z_]*(?:password|passwd|pwd)\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&"']*)`)
	// password%3DPASS
	keyEscRE = lazyre.MustCompile(`(?i)([a-z_]*(?:password|passwd|pwd)%3D)([^\s&"']*)`)
)

// Spec returns s with every password in it replaced by Mask: s may be a
// strategy spec ("segment?dsn=postgres://u:PASS@host/db&tag=a"), a DSN, a
// comma-separated DSN list, or a message quoting any of them. It masks
//
//   - URL userinfo passwords: scheme://user:PASS@host, also URL-escaped
//     (scheme%3A%2F%2Fuser%3APASS%40host);
//   - go-sql-driver DSNs: user:PASS@tcp(host:port)/db, user:PASS@/db, also
//     URL-escaped;
//   - key=value passwords: password=PASS, password='PA SS' (libpq), URL
//     query keys such as ?password=PASS&..., any key ending in password,
//     passwd or pwd, also URL-escaped (password%3DPASS).
//
// Everything else, users and hosts included, is kept as written. A string
// with no password is returned unchanged. Where a form is ambiguous it masks
// more rather than less.
func Spec(s string) string {
	s = userinfoRE().ReplaceAllString(s, "${1}"+Mask+"@")
	s = userinfoEscRE().ReplaceAllString(s, "${1}"+Mask+"%40")
	s = driverRE().ReplaceAllString(s, "${1}"+Mask+"@${3}")
	s = driverEscRE().ReplaceAllString(s, "${1}"+Mask+"%40${3}")
	s = keyRE().ReplaceAllString(s, "${1}"+Mask)
	return keyEscRE().ReplaceAllString(s, "${1}"+Mask)
}

// Specs returns Spec of each of specs, in a new slice.
func Specs(specs []string) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = Spec(s)
	}
	return out
}
