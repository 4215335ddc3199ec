package compare_test

import (
	"testing"

	"github.com/idgenkit/idgen/compare"
)

func TestRedactDSN(t *testing.T) {
	for _, tt := range []struct{ name, dsn, want string }{
		{"url with password", "postgres://app:s3cret@db:5432/app?sslmode=disable", "postgres://app:xxxxx@db:5432/app?sslmode=disable"},
		{"url without password", "postgres://postgres@127.0.0.1:5432/postgres", "postgres://postgres@127.0.0.1:5432/postgres"},
		{"url password parameter", "postgres://db/app?password=s3cret&sslmode=disable", "postgres://db/app?password=xxxxx&sslmode=disable"},
		{"key=value", "host=db user=app password=s3cret dbname=app", "host=db user=app password=xxxxx dbname=app"},
		{"key=value quoted", "host=db password='s3 cret' dbname=app", "host=db password=xxxxx dbname=app"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := compare.RedactDSN(tt.dsn); got != tt.want {
				t.Errorf("RedactDSN(%q) = %q; want %q", tt.dsn, got, tt.want)
			}
		})
	}
}

func TestThisMachine(t *testing.T) {
	m := compare.ThisMachine()
	if m.Cores < 1 || m.OS == "" || m.Arch == "" {
		t.Errorf("ThisMachine() = %+v; want cores, OS and arch", m)
	}
}
