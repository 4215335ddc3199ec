package segment_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/idgentest"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/segment"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// uniqueName is a sequence, table, key or database name for this test only.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s_%d_%d", prefix, time.Now().UnixNano(), tagSeq.Add(1))
}

// twoServers returns two DSNs that stand in for two ticket servers of one
// kind, each in a place of its own (a PostgreSQL schema, a MariaDB database,
// a Redis database with a key of its own), and the name to count in; all
// dropped at the end of the test.
func twoServers(t *testing.T, kind string) (dsns []string, name string) {
	t.Helper()
	ctx := context.Background()
	name = uniqueName("tickets")
	switch kind {
	case "postgres":
		dsn := testenv.PostgresDSN(t)
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatalf("connect %s: %v", dsn, err)
		}
		defer c.Close(ctx)
		for _, sfx := range []string{"a", "b"} {
			schema := name + "_" + sfx
			if _, err := c.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
				t.Fatalf("CREATE SCHEMA %s: %v", schema, err)
			}
			t.Cleanup(func() {
				if c, err := pgx.Connect(ctx, dsn); err == nil {
					c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
					c.Close(ctx)
				}
			})
			u, _ := url.Parse(dsn)
			q := u.Query()
			q.Set("search_path", schema)
			u.RawQuery = q.Encode()
			dsns = append(dsns, u.String())
		}
	case "mysql":
		dsn := testenv.MySQLDSN(t)
		for _, sfx := range []string{"a", "b"} {
			db := name + "_" + sfx
			err := withMySQL(ctx, dsn, func(c *sql.DB) error { _, err := c.ExecContext(ctx, "CREATE DATABASE "+db); return err })
			if err != nil {
				t.Fatalf("CREATE DATABASE %s: %v", db, err)
			}
			t.Cleanup(func() {
				withMySQL(ctx, dsn, func(c *sql.DB) error { _, err := c.ExecContext(ctx, "DROP DATABASE "+db); return err })
			})
			u, _ := url.Parse(dsn)
			u.Path = "/" + db
			dsns = append(dsns, u.String())
		}
	case "redis":
		dsn := testenv.RedisURL(t)
		for _, db := range []string{"1", "2"} {
			u, _ := url.Parse(dsn)
			u.Path = "/" + db
			d := u.String()
			dsns = append(dsns, d)
			t.Cleanup(func() {
				withRedis(d, func(c *redis.Client) error { return c.Del(ctx, "idgen:ticket:{"+name+"}").Err() })
			})
		}
	}
	return dsns, name
}

var ticketKinds = []string{"postgres", "mysql", "redis"}

// Each server counts in its residue class; the client's IDs are unique.
func TestTickets(t *testing.T) {
	ctx := context.Background()
	for _, kind := range ticketKinds {
		t.Run(kind, func(t *testing.T) {
			dsns, name := twoServers(t, kind)
			for i, dsn := range dsns {
				s, err := segment.OpenTicketServer(ctx, dsn, segment.TicketConfig{Name: name, Increment: 2, Offset: int64(i + 1)})
				if err != nil {
					t.Fatalf("OpenTicketServer(%q) = %v", dsn, err)
				}
				var prev int64
				for range 50 {
					v, err := s.Ticket(ctx)
					if err != nil {
						t.Fatalf("Ticket() = %v", err)
					}
					if v%2 != int64(i+1)%2 || v <= prev {
						t.Fatalf("server %d: Ticket() = %d after %d; want increasing, class %d mod 2", i, v, prev, i+1)
					}
					prev = v
				}
				s.Close()
			}
			g, err := segment.DialTickets(ctx, dsns, name)
			if err != nil {
				t.Fatalf("DialTickets(%q) = %v", dsns, err)
			}
			defer g.Close()
			ids := take(t, g, 200)
			noDuplicates(t, ids)
			var odd int
			for _, v := range ids {
				odd += int(v % 2)
			}
			if odd != 100 {
				t.Fatalf("round robin over 2 servers gave %d odd IDs of 200; want 100", odd)
			}
			per := 1000
			if kind == "mysql" {
				per = 250 // Flickr's REPLACE commits (and fsyncs) once per ticket
			}
			idgentest.Run(t, g, idgentest.Options{Goroutines: 4, PerGoroutine: per})
		})
	}
}

// One ticket server stops; the client fails over to the other with no
// duplicates, and takes the first back after its cooldown.
func TestTicketFailover(t *testing.T) {
	ctx := context.Background()
	for _, kind := range ticketKinds {
		t.Run(kind, func(t *testing.T) {
			dsns, name := twoServers(t, kind)
			pdsn, p := via(t, dsns[1])
			var servers []segment.TicketServer
			for i, dsn := range []string{dsns[0], pdsn} {
				s, err := segment.OpenTicketServer(ctx, dsn, segment.TicketConfig{Name: name, Increment: 2, Offset: int64(i + 1)})
				if err != nil {
					t.Fatalf("OpenTicketServer(%q) = %v", dsn, err)
				}
				defer s.Close()
				servers = append(servers, s)
			}
			g, err := segment.NewTickets(segment.TicketsConfig{Servers: servers, Cooldown: 50 * time.Millisecond})
			if err != nil {
				t.Fatalf("NewTickets() = %v", err)
			}
			before := take(t, g, 100)
			p.Cut()
			during := take(t, g, 100)
			for _, v := range during {
				if v%2 != 1 {
					t.Fatalf("ID %d from the stopped server (even class)", v)
				}
			}
			p.Restore()
			time.Sleep(60 * time.Millisecond) // the cooldown ends
			var after []uint64
			deadline := time.Now().Add(10 * time.Second)
			for even := 0; even == 0; {
				after = append(after, take(t, g, 10)...)
				for _, v := range after {
					even += int(1 - v%2)
				}
				if time.Now().After(deadline) {
					t.Fatalf("the restored server issued nothing in 10 s")
				}
			}
			noDuplicates(t, before, during, after)

			p.Cut()
			servers[0].Close()
			if _, err := g.Next(ctx); !errors.Is(err, idgen.ErrUnavailable) {
				t.Fatalf("Next() with both servers down = %v; want ErrUnavailable", err)
			}
		})
	}
}

// A server whose sequence or table already counts in another class refuses
// to start, or to issue.
func TestTicketResidue(t *testing.T) {
	ctx := context.Background()
	dsns, name := twoServers(t, "postgres")
	s, err := segment.OpenTicketServer(ctx, dsns[0], segment.TicketConfig{Name: name, Increment: 2, Offset: 1})
	if err != nil {
		t.Fatalf("OpenTicketServer() = %v", err)
	}
	s.Close()
	_, err = segment.OpenTicketServer(ctx, dsns[0], segment.TicketConfig{Name: name, Increment: 3, Offset: 1})
	if !errors.Is(err, segment.ErrResidue) {
		t.Fatalf("OpenTicketServer(increment 3 on an increment-2 sequence) = %v; want ErrResidue", err)
	}
	bad := []segment.TicketConfig{
		{Name: "x;drop", Increment: 2, Offset: 1},
		{Increment: 2, Offset: 3},
		{Increment: -1},
		{Increment: 70000},
	}
	for _, c := range bad {
		if _, err := segment.OpenTicketServer(ctx, dsns[0], c); !errors.Is(err, segment.ErrConfig) {
			t.Fatalf("OpenTicketServer(%+v) = %v; want ErrConfig", c, err)
		}
	}
	if _, err := segment.DialTickets(ctx, []string{dsns[0], "redis://127.0.0.1:1/0"}, name); !errors.Is(err, segment.ErrUnreachable) ||
		!strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("DialTickets(unreachable second) = %v; want ErrUnreachable naming it", err)
	}
}
