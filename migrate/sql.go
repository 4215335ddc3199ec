package migrate

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idgenkit/idgen/snowflake"
)

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

// keyFuncSQL returns the CREATE FUNCTION of the key function the trigger
// (and, after the swap, the key column's default) calls.
func (p *Plan) keyFuncSQL() []string {
	if p.NewType != "bigint" {
		return []string{fmt.Sprintf(`CREATE OR REPLACE FUNCTION %s() RETURNS uuid LANGUAGE plpgsql VOLATILE AS $f$
DECLARE
	-- RFC 9562 UUIDv7: 48-bit Unix ms, version 7, 74 random bits (variant 10 from gen_random_uuid)
	b bytea := uuid_send(gen_random_uuid());
	ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint;
BEGIN
	b := overlay(b PLACING substring(int8send(ms) FROM 3) FROM 1 FOR 6);
	b := set_byte(b, 6, (get_byte(b, 6) & 15) | 112);
	RETURN encode(b, 'hex')::uuid;
END $f$`, p.keyFunc())}
	}
	l := p.Layout
	total := l.Bits()
	shift := total
	var timeShift, seqShift, randShift, seqBits, randBits, timeBits int
	var node uint64
	for _, f := range l.Fields {
		shift -= f.Bits
		switch f.Name {
		case snowflake.FieldTime:
			timeShift, timeBits = shift, f.Bits
		case snowflake.FieldSequence:
			seqShift, seqBits = shift, f.Bits
		case snowflake.FieldRandom:
			randShift, randBits = shift, f.Bits
		default:
			v := uint64(p.Nodes[f.Name])
			if f.Name == p.ReservedField {
				v = uint64(p.TriggerWorker)
			}
			node |= v << uint(shift)
		}
	}
	epoch := l.TickTime(0)
	tick := l.TickTime(1).Sub(epoch)
	expr := fmt.Sprintf("(t << %d) | %d", timeShift, node)
	if seqBits > 0 {
		expr += fmt.Sprintf(" | ((nextval(%s) %% %d) << %d)", quoteLiteral(p.seqName()), uint64(1)<<seqBits, seqShift)
	}
	if randBits > 0 {
		expr += fmt.Sprintf(" | (floor(random() * %d)::bigint << %d)", uint64(1)<<randBits, randShift)
	}
	return []string{
		"CREATE SEQUENCE IF NOT EXISTS " + p.seqName(),
		fmt.Sprintf(`CREATE OR REPLACE FUNCTION %s() RETURNS bigint LANGUAGE plpgsql VOLATILE AS $f$
DECLARE
	-- Snowflake layout %s; %s %d is reserved for this function
	t bigint := (floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint - %d) / %d;
BEGIN
	IF t < 0 OR t > %d THEN
		RAISE EXCEPTION 'idgen: tick %% is outside the layout''s %d-bit time field', t;
	END IF;
	RETURN %s;
END $f$`, p.keyFunc(), l, p.ReservedField, p.TriggerWorker, epoch.UnixMicro(), tick/time.Microsecond,
			int64(1)<<timeBits-1, timeBits, expr),
	}
}

// prepareSQL returns the statements of the prepare phase (run in one
// transaction).
func (p *Plan) prepareSQL() []string {
	key, nc := ident(p.Key), ident(p.newCol())
	s := []string{
		fmt.Sprintf("ALTER TABLE %s ADD COLUMN IF NOT EXISTS %s %s", p.qtable(), nc, p.NewType),
		fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (old_key %s PRIMARY KEY, new_key %s NOT NULL)", p.mapTable(), p.KeyType, p.NewType),
	}
	s = append(s, p.keyFuncSQL()...)
	// A key update moves the row's mapping to its new old key; the row
	// keeps its new key (a row not backfilled yet gets one now), and
	// referencing rows that follow through ON UPDATE CASCADE copy it.
	s = append(s, fmt.Sprintf(`CREATE OR REPLACE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
	IF TG_OP = 'UPDATE' THEN
		IF NEW.%[2]s IS NOT DISTINCT FROM OLD.%[2]s THEN
			RETURN NEW;
		END IF;
		DELETE FROM %[5]s WHERE old_key = OLD.%[2]s;
	END IF;
	IF NEW.%[3]s IS NULL THEN
		NEW.%[3]s := %[4]s();
	END IF;
	INSERT INTO %[5]s AS m (old_key, new_key) VALUES (NEW.%[2]s, NEW.%[3]s) ON CONFLICT (old_key) DO UPDATE SET new_key = EXCLUDED.new_key;
	RETURN NEW;
END $f$`, p.assignFunc(), key, nc, p.keyFunc(), p.mapTable()),
		fmt.Sprintf("DROP TRIGGER IF EXISTS %s ON %s", p.assignTrigger(), p.qtable()),
		fmt.Sprintf("CREATE TRIGGER %s BEFORE INSERT OR UPDATE OF %s ON %s FOR EACH ROW EXECUTE FUNCTION %s()",
			p.assignTrigger(), key, p.qtable(), p.assignFunc()))
	for _, c := range p.childColumns() {
		s = append(s,
			fmt.Sprintf("ALTER TABLE %s ADD COLUMN IF NOT EXISTS %s %s", c.qtable(), ident(c.newCol()), p.NewType),
			p.copyFuncSQL(c, c.assignFunc(), c.column, c.newCol(), p.Key, p.newCol(), p.keyFunc()+"()"),
			fmt.Sprintf("DROP TRIGGER IF EXISTS %s ON %s", c.assignTrigger(), c.qtable()),
			fmt.Sprintf("CREATE TRIGGER %s BEFORE INSERT OR UPDATE OF %s ON %s FOR EACH ROW EXECUTE FUNCTION %s()",
				c.assignTrigger(), ident(c.column), c.qtable(), c.assignFunc()))
	}
	return s
}

// copyFuncSQL returns the CREATE FUNCTION of a trigger function on c's
// table that sets the column dst from the parent row the column src
// references (by the parent's column by), its column val. A row of a
// self-referencing table that references itself takes its own val, set
// on insert from the expression fill when still NULL (this trigger may
// fire before the one that sets it).
func (p *Plan) copyFuncSQL(c childColumn, fn, src, dst, by, val, fill string) string {
	self := ""
	if c.schema == p.Schema && c.table == p.Table {
		self = fmt.Sprintf("\n\tELSIF NEW.%s = NEW.%s THEN", ident(src), ident(by))
		if fill != "" {
			self += fmt.Sprintf("\n\t\tIF TG_OP = 'INSERT' THEN\n\t\t\tNEW.%s := coalesce(NEW.%[1]s, %s);\n\t\tEND IF;", ident(val), fill)
		}
		self += fmt.Sprintf("\n\t\tNEW.%s := NEW.%s;", ident(dst), ident(val))
	}
	return fmt.Sprintf(`CREATE OR REPLACE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
	IF NEW.%[2]s IS NULL THEN
		NEW.%[3]s := NULL;%[7]s
	ELSE
		SELECT p.%[5]s INTO NEW.%[3]s FROM %[4]s p WHERE p.%[6]s = NEW.%[2]s;
	END IF;
	RETURN NEW;
END $f$`, fn, ident(src), ident(dst), p.qtable(), ident(val), ident(by), self)
}

// keepOldSQL returns the statements, run in the swap transaction, of the
// triggers that keep the old keys of rows inserted after the swap (from
// the old key column's default, kept) and their mapping rows, so that
// Revert can swap back.
func (p *Plan) keepOldSQL() []string {
	key, oc := ident(p.Key), ident(p.oldCol())
	s := []string{
		fmt.Sprintf(`CREATE OR REPLACE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
	IF NEW.%[2]s IS NOT NULL THEN
		INSERT INTO %[4]s AS m (old_key, new_key) VALUES (NEW.%[2]s, NEW.%[3]s) ON CONFLICT (old_key) DO UPDATE SET new_key = EXCLUDED.new_key;
	END IF;
	RETURN NEW;
END $f$`, p.keepFunc(), oc, key, p.mapTable()),
		fmt.Sprintf("CREATE TRIGGER %s BEFORE INSERT OR UPDATE OF %s, %s ON %s FOR EACH ROW EXECUTE FUNCTION %s()",
			p.keepTrigger(), key, oc, p.qtable(), p.keepFunc()),
	}
	for _, c := range p.childColumns() {
		s = append(s, p.copyFuncSQL(c, c.keepFunc(), c.column, c.oldCol(), p.Key, p.oldCol(), ""),
			fmt.Sprintf("CREATE TRIGGER %s BEFORE INSERT OR UPDATE OF %s ON %s FOR EACH ROW EXECUTE FUNCTION %s()",
				c.keepTrigger(), ident(c.column), c.qtable(), c.keepFunc()))
	}
	return s
}

// dropKeepOldSQL drops what keepOldSQL created.
func (p *Plan) dropKeepOldSQL() []string {
	s := []string{
		fmt.Sprintf("DROP TRIGGER IF EXISTS %s ON %s", p.keepTrigger(), p.qtable()),
		fmt.Sprintf("DROP FUNCTION IF EXISTS %s()", p.keepFunc()),
	}
	for _, c := range p.childColumns() {
		s = append(s, fmt.Sprintf("DROP TRIGGER IF EXISTS %s ON %s", c.keepTrigger(), c.qtable()),
			fmt.Sprintf("DROP FUNCTION IF EXISTS %s()", c.keepFunc()))
	}
	return s
}

// dropAssignSQL drops the triggers of prepareSQL.
func (p *Plan) dropAssignSQL() []string {
	var s []string
	for _, c := range p.childColumns() {
		s = append(s, fmt.Sprintf("DROP TRIGGER IF EXISTS %s ON %s", c.assignTrigger(), c.qtable()),
			fmt.Sprintf("DROP FUNCTION IF EXISTS %s()", c.assignFunc()))
	}
	return append(s, fmt.Sprintf("DROP TRIGGER IF EXISTS %s ON %s", p.assignTrigger(), p.qtable()),
		fmt.Sprintf("DROP FUNCTION IF EXISTS %s()", p.assignFunc()))
}

// lockSQL returns the first statements of a transaction that changes the
// table and its referencing tables: ACCESS EXCLUSIVE locks (a partitioned
// table's reach its partitions), waiting at most 5 s for them.
func (p *Plan) lockSQL() []string {
	tables := []string{p.qtable()}
	for _, c := range p.childColumns() {
		if !slices.Contains(tables, c.qtable()) {
			tables = append(tables, c.qtable())
		}
	}
	return []string{
		"SET LOCAL lock_timeout = '5s'",
		fmt.Sprintf("LOCK TABLE %s IN ACCESS EXCLUSIVE MODE", strings.Join(tables, ", ")),
	}
}

// def returns fk's definition: as recorded, or, for a state recorded by an
// earlier version, built from its parts.
func (p *Plan) fkDef(fk FK) string {
	if fk.Def != "" {
		return fk.Def
	}
	return fmt.Sprintf("FOREIGN KEY (%s) REFERENCES %s(%s) ON UPDATE %s ON DELETE %s",
		idents(fk.Columns, ident(fk.Column)), p.qtable(), idents(fk.RefColumns, ident(p.Key)), fk.OnUpdate, fk.OnDelete)
}

// dropFKSQL drops fk: where it is declared, and, for one declared on a
// partitioned table, its copies on the partitions that the validate phase
// has not attached yet.
func (p *Plan) dropFKSQL(fk FK) []string {
	s := []string{fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT IF EXISTS %s", fk.qtable(), ident(fk.Name))}
	for i, l := range fk.Leaves {
		if i < len(fk.Clones) {
			s = append(s, fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT IF EXISTS %s", l, ident(fk.Clones[i])))
		}
	}
	return s
}

// addFKSQL re-adds fk NOT VALID on the columns now named as before (the
// validate phase validates it): where it was declared, or, for one
// declared on a partitioned table, on each partition.
func (p *Plan) addFKSQL(fk FK) []string {
	if fk.Clones == nil {
		s := []string{fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s %s NOT VALID", fk.qtable(), ident(fk.Name), p.fkDef(fk))}
		if fk.Comment != "" {
			s = append(s, fmt.Sprintf("COMMENT ON CONSTRAINT %s ON %s IS %s", ident(fk.Name), fk.qtable(), quoteLiteral(fk.Comment)))
		}
		return s
	}
	var s []string
	for i, l := range fk.Leaves {
		s = append(s, fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s %s NOT VALID", l, ident(fk.Clones[i]), p.fkDef(fk)))
	}
	return s
}

// idents returns the quoted names, or one when names is empty.
func idents(names []string, one string) string {
	if len(names) == 0 {
		return one
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = ident(n)
	}
	return strings.Join(q, ", ")
}

// placeIndexSQL puts the index ix built with the suffix take in ix's
// place, moving the one there to the suffix keep: a constraint is
// re-added USING INDEX (its old index went with the constraint), a plain
// index (and its partitions') renamed.
func placeIndexSQL(ix Index, take, keep string) []string {
	var s []string
	if ix.Constraint != "" {
		add := fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s %s USING INDEX %s", ix.qtable(), ident(ix.Name), ix.Constraint, ident(twinName(ix.Name, take)))
		if ix.Deferrable != "" {
			add += " " + ix.Deferrable
		}
		s = append(s, add)
		if ix.ConstraintComment != "" {
			s = append(s, fmt.Sprintf("COMMENT ON CONSTRAINT %s ON %s IS %s", ident(ix.Name), ix.qtable(), quoteLiteral(ix.ConstraintComment)))
		}
	} else {
		s = append(s, fmt.Sprintf("ALTER INDEX %s RENAME TO %s", ix.qname(ix.Name), ident(twinName(ix.Name, keep))),
			fmt.Sprintf("ALTER INDEX %s RENAME TO %s", ix.qname(twinName(ix.Name, take)), ident(ix.Name)))
		for _, part := range ix.Parts {
			s = append(s, fmt.Sprintf("ALTER INDEX %s RENAME TO %s", part.qname(part.Name), ident(twinName(part.Name, keep))),
				fmt.Sprintf("ALTER INDEX %s RENAME TO %s", part.qname(twinName(part.Name, take)), ident(part.Name)))
		}
	}
	if ix.Comment != "" {
		s = append(s, fmt.Sprintf("COMMENT ON INDEX %s IS %s", ix.qname(ix.Name), quoteLiteral(ix.Comment)))
	}
	if ix.Clustered {
		s = append(s, fmt.Sprintf("ALTER TABLE %s CLUSTER ON %s", ix.qtable(), ident(ix.Name)))
	}
	if ix.ReplicaIdentity {
		s = append(s, fmt.Sprintf("ALTER TABLE %s REPLICA IDENTITY USING INDEX %s", ix.qtable(), ident(ix.Name)))
	}
	return s
}

// switchSQL returns the statements of the swap transaction (fwd) or of
// the revert transaction (!fwd), given the dependents' statements d (nil:
// none): the key and foreign key columns trade names with their new
// (fwd) or old (!fwd) columns, the indexes and constraints on them move to
// their twins, the foreign keys are re-added NOT VALID, and the dependents
// are re-created to read the columns that now bear the names.
func (p *Plan) switchSQL(fwd bool, d *depSet) []string {
	key, nc, oc := ident(p.Key), ident(p.newCol()), ident(p.oldCol())
	take, keep := newSuffix, oldSuffix
	if !fwd {
		take, keep = oldSuffix, newSuffix
	}
	s := p.lockSQL()
	if d != nil {
		s = append(s, d.drops...)
	}
	for _, fk := range p.FKs {
		s = append(s, p.dropFKSQL(fk)...)
	}
	if fwd {
		s = append(s, p.dropAssignSQL()...)
	} else {
		s = append(s, p.dropKeepOldSQL()...)
	}
	for _, ix := range p.Indexes {
		if ix.Constraint != "" {
			s = append(s, fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT %s", ix.qtable(), ident(ix.Name)))
		}
	}
	if fwd {
		alter := fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s DROP NOT NULL, ", p.qtable(), oc)
		if p.Identity {
			alter = fmt.Sprintf("ALTER TABLE %s ", p.qtable()) // an identity column stays NOT NULL
		}
		s = append(s,
			fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", p.qtable(), key, oc),
			fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", p.qtable(), nc, key),
			alter+fmt.Sprintf("ALTER COLUMN %s SET NOT NULL, ALTER COLUMN %s SET DEFAULT %s()", key, key, p.keyFunc()),
			fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT %s", p.qtable(), ident(p.checkName())))
	} else {
		s = append(s,
			fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", p.qtable(), key, nc),
			fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", p.qtable(), oc, key),
			fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s DROP NOT NULL, ALTER COLUMN %s DROP DEFAULT, ALTER COLUMN %s SET NOT NULL",
				p.qtable(), nc, nc, key),
			fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT %s", p.qtable(), ident(p.oldCheckName())))
	}
	for _, c := range p.childColumns() {
		col, away, back, check := ident(c.column), c.oldCol(), c.newCol(), c.checkName()
		if !fwd {
			away, back, check = c.newCol(), c.oldCol(), c.oldCheckName()
		}
		alter := fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s DROP NOT NULL", c.qtable(), ident(away))
		if c.notNull {
			alter += fmt.Sprintf(", ALTER COLUMN %s SET NOT NULL", col)
		}
		s = append(s,
			fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", c.qtable(), col, ident(away)),
			fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", c.qtable(), ident(back), col),
			alter,
			fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT %s", c.qtable(), ident(check)))
	}
	for _, ix := range p.Indexes {
		s = append(s, placeIndexSQL(ix, take, keep)...)
	}
	for _, fk := range p.FKs {
		s = append(s, p.addFKSQL(fk)...)
	}
	if fwd {
		s = append(s, p.keepOldSQL()...)
	}
	if d != nil {
		s = append(s, d.creates...)
	}
	return s
}
