package redact_test

import (
	"testing"

	"github.com/idgenkit/idgen/internal/redact"
)

func TestSpec(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"no secret", "snowflake?layout=time:41,worker:10,sequence:12", "snowflake?layout=time:41,worker:10,sequence:12"},
		{"user without password", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"},
		{"url", "postgres://u:s3cret@127.0.0.1/db", "postgres://u:xxxxx@127.0.0.1/db"},
		{"url without path", "redis://:s3cret@127.0.0.1:6379", "redis://:xxxxx@127.0.0.1:6379"},
		{"password with @ and :", "postgres://u:s3:c@ret@h:5432/db", "postgres://u:xxxxx@h:5432/db"},
		{"password escaped", "postgres://u:s3%40cret@h/db", "postgres://u:xxxxx@h/db"},
		{"spec dsn", "segment?dsn=postgres://u:s3cret@127.0.0.1/db&tag=a", "segment?dsn=postgres://u:xxxxx@127.0.0.1/db&tag=a"},
		{"spec worker_source", "snowflake?preset=twitter&worker_source=postgres://u:s3cret@h/db?ttl=5s",
			"snowflake?preset=twitter&worker_source=postgres://u:xxxxx@h/db?ttl=5s"},
		{"dsn list", "ticket?dsn=postgres://u:s3cret@h1/db,mysql://root:0ther@h2:3306/test",
			"ticket?dsn=postgres://u:xxxxx@h1/db,mysql://root:xxxxx@h2:3306/test"},
		{"dsn list without paths", "redis://:s3cret@h1:6379,redis://:0ther@h2:6379", "redis://:xxxxx@h1:6379,redis://:xxxxx@h2:6379"},
		{"two specs", "segment?dsn=postgres://u:s3cret@h/db&tag=a,ticket?dsn=redis://:0ther@h",
			"segment?dsn=postgres://u:xxxxx@h/db&tag=a,ticket?dsn=redis://:xxxxx@h"},
		{"escaped url", "segment?dsn=postgres%3A%2F%2Fu%3As3cret%40127.0.0.1%2Fdb&tag=a",
			"segment?dsn=postgres%3A%2F%2Fu%3Axxxxx%40127.0.0.1%2Fdb&tag=a"},
		{"escaped url lower case", "segment?dsn=postgres%3a%2f%2fu%3as3cret%40h%2fdb", "segment?dsn=postgres%3a%2f%2fu%3axxxxx%40h%2fdb"},
		{"escaped password with escapes", "dsn=mysql%3A%2F%2Fu%3As3%2540c%3Aret%40h%2Fdb", "dsn=mysql%3A%2F%2Fu%3Axxxxx%40h%2Fdb"},
		{"escaped list", "dsn=mysql%3A%2F%2Fu%3As3cret%40h1%2Cmysql%3A%2F%2Fv%3A0ther%40h2%2Fdb",
			"dsn=mysql%3A%2F%2Fu%3Axxxxx%40h1%2Cmysql%3A%2F%2Fv%3Axxxxx%40h2%2Fdb"},
		{"socket url without password", "postgres://u@/db?host=/tmp", "postgres://u@/db?host=/tmp"},
		{"socket url", "postgres://u:s3cret@/db?host=/tmp", "postgres://u:xxxxx@/db?host=/tmp"},
		{"escaped socket url without password", "dsn=postgres%3A%2F%2Fu%40%2Fdb", "dsn=postgres%3A%2F%2Fu%40%2Fdb"},
		{"escaped socket url", "dsn=postgres%3A%2F%2Fu%3As3cret%40%2Fdb", "dsn=postgres%3A%2F%2Fu%3Axxxxx%40%2Fdb"},
		{"go-sql-driver", "root:s3cret@tcp(127.0.0.1:3306)/test?parseTime=true", "root:xxxxx@tcp(127.0.0.1:3306)/test?parseTime=true"},
		{"go-sql-driver unix", "root:s3cret@unix(/run/mysqld.sock)/test", "root:xxxxx@unix(/run/mysqld.sock)/test"},
		{"go-sql-driver no address", "root:s3cret@/test", "root:xxxxx@/test"},
		{"go-sql-driver in a message", `open "root:s3cret@tcp(h:3306)/test": refused`, `open "root:xxxxx@tcp(h:3306)/test": refused`},
		{"go-sql-driver list", "u:s3cret@tcp(h1)/db,v:0ther@tcp(h2)/db", "u:xxxxx@tcp(h1)/db,v:xxxxx@tcp(h2)/db"},
		{"go-sql-driver escaped", "dsn=root%3As3cret%40tcp%28h%3A3306%29%2Ftest", "dsn=root%3Axxxxx%40tcp%28h%3A3306%29%2Ftest"},
		{"key=value", "host=127.0.0.1 user=u password=s3cret dbname=db", "host=127.0.0.1 user=u password=xxxxx dbname=db"},
		{"key=value quoted", "host=h password='s3 cr\\'et' dbname=db", "host=h password=xxxxx dbname=db"},
		{"key = value", "host=h password = s3cret", "host=h password = xxxxx"},
		{"key upper case", "PASSWORD=s3cret", "PASSWORD=xxxxx"},
		{"sslpassword", "host=h sslpassword=s3cret", "host=h sslpassword=xxxxx"},
		{"query key", "postgres://u@h/db?password=s3cret&sslmode=disable", "postgres://u@h/db?password=xxxxx&sslmode=disable"},
		{"escaped query key", "dsn=postgres%3A%2F%2Fh%2Fdb%3Fpassword%3Ds3cret&tag=a", "dsn=postgres%3A%2F%2Fh%2Fdb%3Fpassword%3Dxxxxx&tag=a"},
		{"message", `segment: invalid DSN "postgres://u:s3cret@h:1/db": refused`, `segment: invalid DSN "postgres://u:xxxxx@h:1/db": refused`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := redact.Spec(tt.in); got != tt.want {
				t.Errorf("Spec(%q) = %q; want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSpecs(t *testing.T) {
	in := []string{"uuidv7", "segment?dsn=postgres://u:s3cret@h/db&tag=a"}
	got := redact.Specs(in)
	if len(got) != 2 || got[0] != "uuidv7" || got[1] != "segment?dsn=postgres://u:xxxxx@h/db&tag=a" {
		t.Errorf("Specs(%q) = %q; want uuidv7 and the masked segment spec", in, got)
	}
	if in[1] != "segment?dsn=postgres://u:s3cret@h/db&tag=a" {
		t.Errorf("Specs changed its input: %q", in)
	}
}
