// Command idgen issues, inspects and explains distributed unique IDs, and
// measures what each ID scheme costs a PostgreSQL index. Run "idgen help".
package main

import (
	"os"

	"github.com/idgenkit/idgen/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
