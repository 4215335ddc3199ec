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
	s = append(s, fmt.Sprintf(`CREATE OR REPLACE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
	IF TG_OP = 'UPDATE' THEN
		IF NEW.%[2]s IS DISTINCT FROM OLD.%[2]s THEN
			RAISE EXCEPTION 'idgen: %[6]s is being migrated to new keys; its key %[2]s cannot change meanwhile';
		END IF;
		RETURN NEW;
	END IF;
	IF NEW.%[3]s IS NULL THEN
		NEW.%[3]s := %[4]s();
	END IF;
	INSERT INTO %[5]s AS m (old_key, new_key) VALUES (NEW.%[2]s, NEW.%[3]s) ON CONFLICT (old_key) DO UPDATE SET new_key = EXCLUDED.new_key;
	RETURN NEW;
END $f$`, p.assignFunc(), key, nc, p.keyFunc(), p.mapTable(), strings.ReplaceAll(p.Table, "'", "''")),
		fmt.Sprintf("DROP TRIGGER IF EXISTS %s ON %s", ident(p.Table+"_idgen_assign"), p.qtable()),
		fmt.Sprintf("CREATE TRIGGER %s BEFORE INSERT OR UPDATE OF %s ON %s FOR EACH ROW EXECUTE FUNCTION %s()",
			ident(p.Table+"_idgen_assign"), key, p.qtable(), p.assignFunc()))
	for _, fk := range p.FKs {
		col, fnc := ident(fk.Column), ident(fk.newCol())
		trig := ident(fk.Table + "_" + fk.Column + "_idgen_assign")
		s = append(s,
			fmt.Sprintf("ALTER TABLE %s ADD COLUMN IF NOT EXISTS %s %s", fk.qtable(), fnc, p.NewType),
			p.copyFuncSQL(fk, fk.assignFunc(), fk.Column, fk.newCol(), p.Key, p.newCol(), p.keyFunc()+"()"),
			fmt.Sprintf("DROP TRIGGER IF EXISTS %s ON %s", trig, fk.qtable()),
			fmt.Sprintf("CREATE TRIGGER %s BEFORE INSERT OR UPDATE OF %s ON %s FOR EACH ROW EXECUTE FUNCTION %s()",
				trig, col, fk.qtable(), fk.assignFunc()))
	}
	return s
}

// copyFuncSQL returns the CREATE FUNCTION of a trigger function on fk's
// table that sets the column dst from the parent row the column src
// references (by the parent's column by), its column val. A row of a
// self-referencing table that references itself takes its own val, set
// on insert from the expression fill when still NULL (this trigger may
// fire before the one that sets it).
func (p *Plan) copyFuncSQL(fk FK, fn, src, dst, by, val, fill string) string {
	self := ""
	if fk.Schema == p.Schema && fk.Table == p.Table {
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
			ident(p.Table+"_idgen_keep_old"), key, oc, p.qtable(), p.keepFunc()),
	}
	for _, fk := range p.FKs {
		s = append(s, p.copyFuncSQL(fk, fk.keepFunc(), fk.Column, fk.oldCol(), p.Key, p.oldCol(), ""),
			fmt.Sprintf("CREATE TRIGGER %s BEFORE INSERT OR UPDATE OF %s ON %s FOR EACH ROW EXECUTE FUNCTION %s()",
				ident(fk.Table+"_"+fk.Column+"_idgen_keep_old"), ident(fk.Column), fk.qtable(), fk.keepFunc()))
	}
	return s
}

// dropKeepOldSQL drops what keepOldSQL created.
func (p *Plan) dropKeepOldSQL() []string {
	s := []string{
		fmt.Sprintf("DROP TRIGGER IF EXISTS %s ON %s", ident(p.Table+"_idgen_keep_old"), p.qtable()),
		fmt.Sprintf("DROP FUNCTION IF EXISTS %s()", p.keepFunc()),
	}
	for _, fk := range p.FKs {
		s = append(s, fmt.Sprintf("DROP TRIGGER IF EXISTS %s ON %s", ident(fk.Table+"_"+fk.Column+"_idgen_keep_old"), fk.qtable()),
			fmt.Sprintf("DROP FUNCTION IF EXISTS %s()", fk.keepFunc()))
	}
	return s
}

// fkCheck is the CHECK that proves a child's new column complete.
func (fk FK) check() string {
	if fk.NotNull {
		return fmt.Sprintf("CHECK (%s IS NOT NULL)", ident(fk.newCol()))
	}
	return fmt.Sprintf("CHECK ((%s IS NULL) = (%s IS NULL))", ident(fk.Column), ident(fk.newCol()))
}

// lockSQL returns the first statements of a transaction that changes the
// table and its referencing tables: ACCESS EXCLUSIVE locks, waiting at most
// 5 s for them.
func (p *Plan) lockSQL() []string {
	tables := []string{p.qtable()}
	for _, fk := range p.FKs {
		tables = append(tables, fk.qtable())
	}
	return []string{
		"SET LOCAL lock_timeout = '5s'",
		fmt.Sprintf("LOCK TABLE %s IN ACCESS EXCLUSIVE MODE", strings.Join(tables, ", ")),
	}
}

// fkSwapSQL returns the statements that swap fk's column: the column
// fk.Column is renamed to keep, the column take becomes fk.Column (NOT NULL
// when the foreign key's column was), check is dropped, and the foreign
// key is re-added NOT VALID on the new fk.Column.
func (p *Plan) fkSwapSQL(fk FK, keep, take, check string) []string {
	col := ident(fk.Column)
	alter := fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s DROP NOT NULL", fk.qtable(), ident(keep))
	if fk.NotNull {
		alter += fmt.Sprintf(", ALTER COLUMN %s SET NOT NULL", col)
	}
	return []string{
		fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", fk.qtable(), col, ident(keep)),
		fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", fk.qtable(), ident(take), col),
		alter,
		fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT %s", fk.qtable(), ident(check)),
		fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s FOREIGN KEY (%s) REFERENCES %s (%s) ON DELETE %s ON UPDATE %s NOT VALID",
			fk.qtable(), ident(fk.Name), idents(fk.Columns, col), p.qtable(), idents(fk.RefColumns, ident(p.Key)), fk.OnDelete, fk.OnUpdate),
	}
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

// uniques returns one composite foreign key per unique constraint of the
// table that composite foreign keys reference through the key.
func (p *Plan) uniques() []FK {
	var u []FK
	for _, fk := range p.FKs {
		if fk.RefConstraint != "" && !slices.ContainsFunc(u, func(o FK) bool { return o.RefConstraint == fk.RefConstraint }) {
			u = append(u, fk)
		}
	}
	return u
}

// uniqueColumns returns fk's referenced columns with the key as col.
func (p *Plan) uniqueColumns(fk FK, col string) string {
	cols := slices.Clone(fk.RefColumns)
	cols[slices.Index(cols, p.Key)] = col
	return idents(cols, "")
}

// dropUniquesSQL drops the unique constraints composite foreign keys
// reference (after the foreign keys); "SELECT 1" when there are none.
func (p *Plan) dropUniquesSQL() string {
	var s []string
	for _, fk := range p.uniques() {
		s = append(s, "DROP CONSTRAINT "+ident(fk.RefConstraint))
	}
	if len(s) == 0 {
		return "SELECT 1"
	}
	return fmt.Sprintf("ALTER TABLE %s %s", p.qtable(), strings.Join(s, ", "))
}

// addUniquesSQL re-adds them using the indexes named RefConstraint+suffix.
func (p *Plan) addUniquesSQL(suffix string) string {
	var s []string
	for _, fk := range p.uniques() {
		s = append(s, fmt.Sprintf("ADD CONSTRAINT %s UNIQUE USING INDEX %s", ident(fk.RefConstraint), ident(fk.RefConstraint+suffix)))
	}
	if len(s) == 0 {
		return "SELECT 1"
	}
	return fmt.Sprintf("ALTER TABLE %s %s", p.qtable(), strings.Join(s, ", "))
}

// swapSQL returns the statements of the swap transaction.
func (p *Plan) swapSQL() []string {
	key, nc, oc := ident(p.Key), ident(p.newCol()), ident(p.oldCol())
	s := p.lockSQL()
	for _, fk := range p.FKs {
		s = append(s,
			fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT %s", fk.qtable(), ident(fk.Name)),
			fmt.Sprintf("DROP TRIGGER IF EXISTS %s ON %s", ident(fk.Table+"_"+fk.Column+"_idgen_assign"), fk.qtable()),
			fmt.Sprintf("DROP FUNCTION IF EXISTS %s()", fk.assignFunc()))
	}
	s = append(s,
		p.dropUniquesSQL(),
		fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT %s", p.qtable(), ident(p.PKName)),
		fmt.Sprintf("DROP TRIGGER IF EXISTS %s ON %s", ident(p.Table+"_idgen_assign"), p.qtable()),
		fmt.Sprintf("DROP FUNCTION IF EXISTS %s()", p.assignFunc()),
		fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", p.qtable(), key, oc),
		fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", p.qtable(), nc, key),
		fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s DROP NOT NULL, ALTER COLUMN %s SET NOT NULL, ALTER COLUMN %s SET DEFAULT %s()",
			p.qtable(), oc, key, key, p.keyFunc()),
		fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s PRIMARY KEY USING INDEX %s", p.qtable(), ident(p.PKName), ident(p.uniqueIndex())),
		p.addUniquesSQL("_idgen_new"),
		fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT %s", p.qtable(), ident(p.checkName())),
	)
	for _, fk := range p.FKs {
		s = append(s, p.fkSwapSQL(fk, fk.oldCol(), fk.newCol(), fk.checkName())...)
	}
	return append(s, p.keepOldSQL()...)
}

// revertSQL returns the statements of the revert transaction: swapSQL
// backwards, to the old key columns, with the primary key on the index
// Revert built on the old key.
func (p *Plan) revertSQL() []string {
	key, nc, oc := ident(p.Key), ident(p.newCol()), ident(p.oldCol())
	s := p.lockSQL()
	for _, fk := range p.FKs {
		s = append(s, fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT %s", fk.qtable(), ident(fk.Name)))
	}
	s = append(s, p.dropKeepOldSQL()...)
	s = append(s,
		p.dropUniquesSQL(),
		fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT %s", p.qtable(), ident(p.PKName)),
		fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", p.qtable(), key, nc),
		fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", p.qtable(), oc, key),
		fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s DROP NOT NULL, ALTER COLUMN %s DROP DEFAULT, ALTER COLUMN %s SET NOT NULL",
			p.qtable(), nc, nc, key),
		fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s PRIMARY KEY USING INDEX %s", p.qtable(), ident(p.PKName), ident(p.oldIndex())),
		p.addUniquesSQL("_idgen_old"),
		fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT %s", p.qtable(), ident(p.oldCheckName())),
	)
	for _, fk := range p.FKs {
		s = append(s, p.fkSwapSQL(fk, fk.newCol(), fk.oldCol(), fk.oldCheckName())...)
	}
	return s
}
