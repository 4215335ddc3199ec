package segment_test

import (
	"context"
	"io"
	"log"
	"os"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"
)

// quiet drops go-redis's log lines (dial failures the tests provoke).
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	// The driver logs each connection the outage tests cut.
	mysql.SetLogger(log.New(io.Discard, "", 0))
	redis.SetLogger(quiet{})
	os.Exit(m.Run())
}
