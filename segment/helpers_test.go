package segment_test

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/segment"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
)

// store is one kind of store under test.
type store struct {
	name string
	dsn  func(t testing.TB) string
}

var stores = []store{
	{"postgres", testenv.PostgresDSN},
	{"mysql", testenv.MySQLDSN},
	{"redis", testenv.RedisURL},
}

var tagSeq atomic.Int64

var nonWord = regexp.MustCompile(`[^a-z0-9_]+`)

// uniqueTag returns a biz tag no other test (of any package, of any run)
// uses, and removes it from the store at the end of the test.
func uniqueTag(t testing.TB, dsn string) string {
	t.Helper()
	name := nonWord.ReplaceAllString(strings.ToLower(t.Name()), "_")
	if len(name) > 60 {
		name = name[len(name)-60:]
	}
	tag := fmt.Sprintf("test_%s_%d_%d", name, time.Now().UnixNano(), tagSeq.Add(1))
	t.Cleanup(func() { dropTag(t, dsn, tag) })
	return tag
}

// dropTag deletes tag's row or keys, with the drivers directly.
func dropTag(t testing.TB, dsn, tag string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var err error
	switch {
	case strings.HasPrefix(dsn, "postgres"):
		var c *pgx.Conn
		if c, err = pgx.Connect(ctx, dsn); err == nil {
			_, err = c.Exec(ctx, `DELETE FROM idgen_segments WHERE biz_tag = $1`, tag)
			c.Close(ctx)
		}
	case strings.HasPrefix(dsn, "mysql"):
		err = withMySQL(ctx, dsn, func(db *sql.DB) error {
			_, err := db.ExecContext(ctx, `DELETE FROM idgen_segments WHERE biz_tag = ?`, tag)
			return err
		})
	default:
		err = withRedis(dsn, func(c *redis.Client) error {
			k := segment.RedisPrefix + "{" + tag + "}"
			return c.Del(ctx, k, k+":step", k+":description").Err()
		})
	}
	if err != nil && !strings.Contains(err.Error(), "does not exist") && !strings.Contains(err.Error(), "doesn't exist") {
		t.Logf("cleanup of biz tag %q: %v", tag, err)
	}
}

func withMySQL(ctx context.Context, dsn string, f func(*sql.DB) error) error {
	cfg, err := segment.MySQLConfig(dsn)
	if err != nil {
		return err
	}
	cfg.MultiStatements = true
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	return f(db)
}

func withRedis(dsn string, f func(*redis.Client) error) error {
	opt, err := redis.ParseURL(dsn)
	if err != nil {
		return err
	}
	c := redis.NewClient(opt)
	defer c.Close()
	return f(c)
}

// initTag creates tag with step on the store at dsn.
func initTag(t testing.TB, dsn, tag string, step int64) {
	t.Helper()
	ctx := context.Background()
	st, err := segment.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open(%q) = %v", dsn, err)
	}
	defer st.Close()
	if _, created, err := st.Init(ctx, tag, step, "test"); err != nil || !created {
		t.Fatalf("Init(%q, %d) = %v, %v; want created", tag, step, created, err)
	}
}

// dial returns an allocator with its own store (its own pool), closed at
// the end of the test.
func dial(t testing.TB, dsn string, cfg segment.Config) *segment.Allocator {
	t.Helper()
	a, err := segment.Dial(context.Background(), dsn, cfg)
	if err != nil {
		t.Fatalf("Dial(%q, tag %q) = %v", dsn, cfg.Tag, err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// take issues n IDs with Next and returns their values.
func take(t testing.TB, g idgen.Generator, n int) []uint64 {
	t.Helper()
	out := make([]uint64, n)
	for i := range out {
		id, err := g.Next(context.Background())
		if err != nil {
			t.Fatalf("Next() #%d = %v", i, err)
		}
		out[i], _ = id.Uint64()
	}
	return out
}

// noDuplicates fails on the first value that occurs twice across lists.
func noDuplicates(t testing.TB, lists ...[]uint64) {
	t.Helper()
	var all []uint64
	for _, l := range lists {
		all = append(all, l...)
	}
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			t.Fatalf("ID %d issued twice among %d", all[i], len(all))
		}
	}
}

// increasing fails unless ids strictly increase.
func increasing(t testing.TB, what string, ids []uint64) {
	t.Helper()
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("%s: ID #%d %d not above #%d %d", what, i, ids[i], i-1, ids[i-1])
		}
	}
}

// proxy is the test's cuttable TCP proxy (internal/testenv).
type proxy = testenv.Proxy

func newProxy(t testing.TB, target string) *proxy { return testenv.NewProxy(t, target) }

func via(t testing.TB, dsn string) (string, *proxy) { return testenv.ViaProxy(t, dsn) }
