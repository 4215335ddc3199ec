package segment_test

import (
	"testing"

	"github.com/idgenkit/idgen/segment"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name, dsn, want string
	}{
		{"url", "postgres://u:s3cret@h:5432/db?sslmode=disable", "postgres://u:xxxxx@h:5432/db?sslmode=disable"},
		{"unparsable url", "mysql://u:s3cret@h:x/db", "mysql://u:xxxxx@h:x/db"},
		{"list", "postgres://u:s3cret@h1/db,redis://:0ther@h2:6379", "postgres://u:xxxxx@h1/db,redis://:xxxxx@h2:6379"},
		{"key=value", "host=h user=u password=s3cret dbname=db", "host=h user=u password=xxxxx dbname=db"},
		{"go-sql-driver", "u:s3cret@tcp(h:3306)/db", "u:xxxxx@tcp(h:3306)/db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := segment.Redact(tt.dsn); got != tt.want {
				t.Errorf("Redact(%q) = %q; want %q", tt.dsn, got, tt.want)
			}
		})
	}
}
