package segment

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/snowflake"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Instagram defaults.
const (
	// InstagramFunc is the PL/pgSQL function InstallInstagram creates:
	// idgen_instagram_id(seq regclass, shard_id int) RETURNS bigint.
	InstagramFunc = "idgen_instagram_id"
	// DefaultInstagramSeq is the per-table sequence used when none is named.
	DefaultInstagramSeq = "idgen_instagram_seq"
	// MaxShard is the largest logical shard, 2^13-1.
	MaxShard = 1<<13 - 1
	// maxInstagramBatch caps the IDs NextN takes per round trip, far below
	// the 1024 a shard may issue per millisecond.
	maxInstagramBatch = 256
)

// instagramFunc is Instagram's next_id (2012) with the sequence and shard
// as arguments: 41 bits of ms since 1314220021721 (2011-08-24T21:07:01.721Z),
// 13 bits of shard, 10 bits of nextval(seq) % 1024. Outside the 41 bits'
// lifetime (before the epoch, or from 2081-04-30T12:54:37.273Z) it raises
// SQLSTATE 22003 rather than shift the time into the sign bit: bigint's
// << does not check for overflow.
const instagramFunc = `CREATE OR REPLACE FUNCTION ` + InstagramFunc + `(seq regclass, shard_id int)
RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	our_epoch  bigint := 1314220021721;
	seq_id     bigint;
	now_millis bigint;
BEGIN
	IF shard_id < 0 OR shard_id > 8191 THEN
		RAISE EXCEPTION 'idgen: shard % out of range [0, 8191]', shard_id;
	END IF;
	SELECT nextval(seq) % 1024 INTO seq_id;
	SELECT floor(extract(epoch FROM clock_timestamp()) * 1000) INTO now_millis;
	IF now_millis < our_epoch OR now_millis - our_epoch >= 2199023255552 THEN
		RAISE EXCEPTION 'idgen: clock at % ms since 1970 is outside the instagram layout''s lifetime (2011-08-24T21:07:01.721Z to 2081-04-30T12:54:37.273Z)', now_millis
			USING ERRCODE = '22003';
	END IF;
	RETURN ((now_millis - our_epoch) << 23) | (shard_id::bigint << 10) | seq_id;
END
$$`

// InstagramScheme returns the scheme of Instagram IDs: the snowflake preset
// "instagram" (time 41, shard 13, sequence 10; unsigned 64 bits). Every call
// returns the same *idgen.Scheme (schemes compare by pointer); do not modify
// it.
func InstagramScheme() *idgen.Scheme { return instagramScheme }

var instagramScheme = func() *idgen.Scheme {
	l, err := snowflake.Preset("instagram")
	if err != nil {
		panic(err)
	}
	s, err := snowflake.SchemeOf(l)
	if err != nil {
		panic(err)
	}
	return s
}()

// InstallInstagram creates the sequence seq (DefaultInstagramSeq when
// empty) if missing and creates or replaces the function InstagramFunc in
// the PostgreSQL at dsn. Running it again changes nothing.
func InstallInstagram(ctx context.Context, dsn, seq string) error {
	if seq == "" {
		seq = DefaultInstagramSeq
	}
	if !identRE().MatchString(seq) {
		return fmt.Errorf("%w: sequence name %q: want letters, digits and _, starting with a letter, at most 63", ErrConfig, seq)
	}
	if u, err := parseDSN(dsn); err != nil {
		return err
	} else if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return fmt.Errorf("%w: %q: Instagram IDs need PostgreSQL (postgres://)", ErrDSN, u.Redacted())
	}
	pool, err := openPool(ctx, dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('`+InstagramFunc+`'))`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE SEQUENCE IF NOT EXISTS `+pgx.Identifier{seq}.Sanitize()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, instagramFunc)
		return err
	})
	if err != nil {
		return fmt.Errorf("segment: install %s on %s: %w", InstagramFunc, Redact(dsn), err)
	}
	return nil
}

// InstagramConfig configures an Instagram generator.
type InstagramConfig struct {
	// Shard is the logical shard, 0 to MaxShard (8191). Zero is shard 0.
	Shard int
	// Seq is the per-table sequence. Zero means DefaultInstagramSeq.
	Seq string
}

// Instagram fetches IDs from the PL/pgSQL function InstallInstagram
// installs: one round trip per Next, up to 256 IDs per NextN round trip.
// IDs are unique while a shard's sequence advances fewer than 1024 times in
// one millisecond; within a millisecond they do not sort by issue order
// once the sequence wraps, so the scheme is k-sorted, not increasing.
type Instagram struct {
	closed atomic.Bool
	pool   *pgxpool.Pool
	dsn    string
	seq    string
	shard  int
}

var (
	_ idgen.Generator = (*Instagram)(nil)
	_ idgen.Batcher   = (*Instagram)(nil)
)

// DialInstagram connects to the PostgreSQL at dsn and checks that the
// function and the sequence are installed (else ErrNotInstalled).
func DialInstagram(ctx context.Context, dsn string, cfg InstagramConfig) (*Instagram, error) {
	if cfg.Shard < 0 || cfg.Shard > MaxShard {
		return nil, fmt.Errorf("%w: shard %d: want 0 to %d", ErrConfig, cfg.Shard, MaxShard)
	}
	if cfg.Seq == "" {
		cfg.Seq = DefaultInstagramSeq
	}
	if !identRE().MatchString(cfg.Seq) {
		return nil, fmt.Errorf("%w: sequence name %q: want letters, digits and _, starting with a letter, at most 63", ErrConfig, cfg.Seq)
	}
	if u, err := parseDSN(dsn); err != nil {
		return nil, err
	} else if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, fmt.Errorf("%w: %q: Instagram IDs need PostgreSQL (postgres://)", ErrDSN, u.Redacted())
	}
	pool, err := openPool(ctx, dsn)
	if err != nil {
		return nil, err
	}
	g := &Instagram{pool: pool, dsn: Redact(dsn), seq: pgx.Identifier{cfg.Seq}.Sanitize(), shard: cfg.Shard}
	var fn, seq bool
	err = pool.QueryRow(ctx, `SELECT to_regprocedure($1) IS NOT NULL, to_regclass($2) IS NOT NULL`,
		InstagramFunc+"(regclass,integer)", g.seq).Scan(&fn, &seq)
	if err == nil && (!fn || !seq) {
		err = fmt.Errorf("%w: function %s or sequence %s missing; run `idgen segment init --instagram --dsn URL`", ErrNotInstalled, InstagramFunc, cfg.Seq)
	}
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("segment: instagram on %s: %w", g.dsn, err)
	}
	return g, nil
}

// Scheme returns InstagramScheme().
func (g *Instagram) Scheme() *idgen.Scheme { return instagramScheme }

// Next returns one ID, one round trip. After Close it returns
// idgen.ErrClosed.
func (g *Instagram) Next(ctx context.Context) (idgen.ID, error) {
	if g.closed.Load() {
		return idgen.ID{}, idgen.ErrClosed
	}
	var v int64
	if err := g.pool.QueryRow(ctx, `SELECT `+InstagramFunc+`($1::regclass, $2)`, g.seq, g.shard).Scan(&v); err != nil {
		return idgen.ID{}, g.err(err)
	}
	return instagramScheme.FromUint64(uint64(v)), nil
}

// NextN fills dst, up to 256 IDs per round trip, in the order the function
// issued them. After Close it returns idgen.ErrClosed.
func (g *Instagram) NextN(ctx context.Context, dst []idgen.ID) (int, error) {
	if g.closed.Load() {
		return 0, idgen.ErrClosed
	}
	n := 0
	for n < len(dst) {
		k := min(len(dst)-n, maxInstagramBatch)
		rows, err := g.pool.Query(ctx, `SELECT `+InstagramFunc+`($1::regclass, $2) FROM generate_series(1, $3::int) ORDER BY 1`, g.seq, g.shard, k)
		if err != nil {
			return n, g.err(err)
		}
		got := 0
		var v int64
		_, err = pgx.ForEachRow(rows, []any{&v}, func() error {
			if got < k {
				dst[n+got] = instagramScheme.FromUint64(uint64(v))
				got++
			}
			return nil
		})
		if err == nil && got != k {
			err = errors.New("short batch")
		}
		if err != nil {
			return n, g.err(err)
		}
		n += k
	}
	return n, nil
}

func (g *Instagram) err(err error) error {
	if isPgCode(err, "22003") {
		return fmt.Errorf("%w: segment: instagram id on %s: %w", idgen.ErrLayoutExhausted, g.dsn, err)
	}
	err = storeErr(g.dsn, "instagram id", err)
	if errors.Is(err, ErrUnreachable) {
		return fmt.Errorf("%w: %w", idgen.ErrUnavailable, err)
	}
	return err
}

// Close closes the pool; Next and NextN then return idgen.ErrClosed. A
// second Close returns nil.
func (g *Instagram) Close() error {
	if !g.closed.Swap(true) {
		g.pool.Close()
	}
	return nil
}
