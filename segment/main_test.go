package segment_test

import (
	"io"
	"log"
	"os"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestMain(m *testing.M) {
	// The driver logs each connection the outage tests cut.
	mysql.SetLogger(log.New(io.Discard, "", 0))
	os.Exit(m.Run())
}
