package workerid_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/internal/testenv"
	"github.com/idgenkit/idgen/workerid"
)

func init() {
	backends = append(backends, struct {
		name  string
		setup func(t *testing.T) backend
	}{"redis", func(t *testing.T) backend {
		u := testenv.RedisURL(t)
		ns := redisNamespace(t, u)
		return backend{
			addr: u,
			open: func(ctx context.Context, addr string, cfg workerid.LeaseConfig) (leaseSource, error) {
				cfg.Namespace = ns
				s, err := workerid.OpenRedis(ctx, addr, workerid.RedisConfig{LeaseConfig: cfg})
				if err != nil {
					return nil, err
				}
				return s, nil
			},
			via: func(t *testing.T) (string, *proxy) { return viaProxy(t, u) },
		}
	}})
}

// redisNamespace returns a unique namespace whose keys are deleted at the
// end of the test.
func redisNamespace(t testing.TB, u string) string {
	t.Helper()
	ns := uniqueName(t)
	t.Cleanup(func() {
		opt, err := redis.ParseURL(u)
		if err != nil {
			return
		}
		c := redis.NewClient(opt)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		keys, err := c.Keys(ctx, "idgen:{"+ns+"}:*").Result()
		if err == nil && len(keys) > 0 {
			err = c.Del(ctx, keys...).Err()
		}
		if err != nil {
			t.Logf("cleanup of Redis namespace %s: %v", ns, err)
		}
	})
	return ns
}

func TestRedisUnreachableAndBadConfig(t *testing.T) {
	addr := "127.0.0.1:" + itoa(freePort(t))
	_, err := workerid.OpenRedis(context.Background(), "redis://"+addr+"/0?dial_timeout=2s", workerid.RedisConfig{})
	if !errors.Is(err, idgen.ErrUnavailable) {
		t.Fatalf("OpenRedis(%s) = %v; want ErrUnavailable", addr, err)
	}
	for _, tt := range []struct {
		url string
		cfg workerid.RedisConfig
	}{
		{"redis://" + addr + "/0", workerid.RedisConfig{LeaseConfig: workerid.LeaseConfig{Namespace: "a{b}"}}},
		{"redis://" + addr + "/0?nosuchoption=1", workerid.RedisConfig{}},
		{"redis://" + addr + "/0", workerid.RedisConfig{LeaseConfig: workerid.LeaseConfig{TTL: 2e9, LostAfter: 2e9}}},
	} {
		if _, err := workerid.OpenRedis(context.Background(), tt.url, tt.cfg); !errors.Is(err, workerid.ErrConfig) {
			t.Fatalf("OpenRedis(%q, %+v) = %v; want ErrConfig", tt.url, tt.cfg, err)
		}
	}
}
