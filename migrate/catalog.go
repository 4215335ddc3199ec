package migrate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/idgenkit/idgen/internal/lazyre"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The catalog reads of Inspect. They run in a transaction whose
// search_path is pg_catalog (catalogTx): the names they print carry their
// schema.

var fkActions = map[string]string{"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}

const fkQuery = `SELECT con.oid, con.conrelid, con.conname, n.nspname, c.relname, c.relkind = 'p', c.relispartition,
		array(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(num, i)
			JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.num ORDER BY k.i),
		array(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(num, i)
			JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.num ORDER BY k.i),
		con.confdeltype::text, con.confupdtype::text,
		coalesce((SELECT u.conname::text FROM pg_constraint u WHERE u.conrelid = con.confrelid AND u.conindid = con.conindid
			AND u.contype IN ('p', 'u')), ''),
		pg_get_constraintdef(con.oid), coalesce(obj_description(con.oid, 'pg_constraint'), '')
	FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid
	JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE con.contype = 'f' AND con.confrelid = $1 AND con.conparentid = 0 ORDER BY n.nspname, c.relname, con.conname`

// know records a constraint ("c") or index ("i") the migration handles.
func (p *Plan) know(kind, schema, table, name string) {
	if p.known == nil {
		p.known = map[string]bool{}
	}
	p.known[kind+":"+schema+"."+table+"."+name] = true
}

func (p *Plan) isKnown(kind, schema, table, name string) bool {
	return p.known[kind+":"+schema+"."+table+"."+name]
}

// knowRecorded fills known from a recorded plan's foreign keys and indexes.
func (p *Plan) knowRecorded() {
	for _, fk := range p.FKs {
		p.know("c", fk.Schema, fk.Table, fk.Name)
		for i, l := range fk.Leaves {
			if i < len(fk.Clones) {
				s, t := splitQualified(l)
				p.know("c", s, t, fk.Clones[i])
			}
		}
	}
	for _, ix := range p.Indexes {
		p.knowIndex(ix)
	}
}

func (p *Plan) knowIndex(ix Index) {
	p.know("i", ix.Schema, ix.Table, ix.Name)
	if ix.Constraint != "" {
		p.know("c", ix.Schema, ix.Table, ix.Name)
	}
	for _, part := range ix.Parts {
		p.know("i", part.Schema, part.Table, part.Name)
	}
}

// splitQualified splits a sanitized "schema"."table" name.
func splitQualified(q string) (schema, table string) {
	var parts []string
	for q != "" {
		if !strings.HasPrefix(q, `"`) {
			break
		}
		i := 1
		var b strings.Builder
		for i < len(q) {
			if q[i] == '"' {
				if i+1 < len(q) && q[i+1] == '"' {
					b.WriteByte('"')
					i += 2
					continue
				}
				break
			}
			b.WriteByte(q[i])
			i++
		}
		parts = append(parts, b.String())
		q = strings.TrimPrefix(q[min(i+1, len(q)):], ".")
	}
	if len(parts) != 2 {
		return "", ""
	}
	return parts[0], parts[1]
}

// inspectKeyFK refuses a key that is itself a foreign key (a 1:1
// extension table): its values are its parent's keys.
func (p *Plan) inspectKeyFK(ctx context.Context, q pgx.Tx, oid uint32) error {
	rows, err := q.Query(ctx, `SELECT con.conname::text, con.confrelid::regclass::text, c.relname::text,
			array(SELECT a.attname::text FROM unnest(con.confkey) k JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k)
		FROM pg_constraint con JOIN pg_class c ON c.oid = con.confrelid
		WHERE con.conrelid = $1 AND con.contype = 'f' AND con.conparentid = 0
			AND (SELECT attnum FROM pg_attribute WHERE attrelid = $1 AND attname = $2) = ANY (con.conkey)`, oid, p.Key)
	if err != nil {
		return err
	}
	type keyFK struct{ name, parent, parentName string }
	var found []keyFK
	var refs [][]string
	for rows.Next() {
		var f keyFK
		var ref []string
		if err := rows.Scan(&f.name, &f.parent, &f.parentName, &ref); err != nil {
			return err
		}
		found, refs = append(found, f), append(refs, ref)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i, f := range found {
		p.refuse("key is a foreign key", p.Table+"."+p.Key,
			"it references %s (%s) through %s: its values are %s's keys, so migrated alone its rows would no longer join their parent",
			fmt.Sprintf("migrate %s instead: %s migrates with it as a referencing table, its key following %s's", f.parent, p.Table, f.parentName),
			f.parent, strings.Join(refs[i], ", "), f.name, f.parentName)
	}
	return nil
}

// inspectInheritance refuses table inheritance (not partitioning) on the
// table.
func (p *Plan) inspectInheritance(ctx context.Context, q pgx.Tx, oid uint32) error {
	return p.refuseInheritance(ctx, q, p.qtable())
}

func (p *Plan) refuseInheritance(ctx context.Context, q pgx.Tx, table string) error {
	var other string
	err := q.QueryRow(ctx, `SELECT coalesce((SELECT CASE WHEN i.inhrelid = $1::regclass THEN i.inhparent ELSE i.inhrelid END::regclass::text
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE (i.inhparent = $1::regclass OR i.inhrelid = $1::regclass) AND NOT c.relispartition LIMIT 1), '')`, table).Scan(&other)
	if err != nil || other == "" {
		return err
	}
	p.refuse("table inheritance", table, "it inherits from or is inherited by %s (INHERITS, not partitioning): a column added to it reaches the other table too",
		"migrate cannot move keys through table inheritance; use declarative partitioning, or detach the tables (ALTER TABLE ... NO INHERIT)", other)
	return nil
}

// inspectFKs finds the foreign keys that reference the key: single-column
// ones, and composite ones through a unique constraint that includes it
// (foreign keys through other unique constraints are unaffected); with,
// for a referencing table that is partitioned or a partition, its
// partitioned table and partitions.
func (p *Plan) inspectFKs(ctx context.Context, q pgx.Tx, oid uint32) error {
	rows, err := q.Query(ctx, fkQuery, oid)
	if err != nil {
		return err
	}
	type found struct {
		fk                  FK
		oid, rel            uint32
		partitioned, isPart bool
	}
	var fs []found
	for rows.Next() {
		var f found
		fk := &f.fk
		var del, upd, unique string
		var cols, refs []string
		if err := rows.Scan(&f.oid, &f.rel, &fk.Name, &fk.Schema, &fk.Table, &f.partitioned, &f.isPart, &cols, &refs, &del, &upd, &unique,
			&fk.Def, &fk.Comment); err != nil {
			return err
		}
		at := slices.Index(refs, p.Key)
		if at < 0 {
			continue
		}
		fk.Column = cols[at]
		if len(cols) > 1 {
			if unique == "" {
				p.refuse("composite foreign key", fk.Name+" on "+fk.qtable(),
					"it references %s (%s) through a unique index that backs no constraint", "make that index a UNIQUE constraint first",
					p.Table, strings.Join(refs, ", "))
				continue
			}
			fk.Columns, fk.RefColumns, fk.RefConstraint = cols, refs, unique
		}
		fk.OnDelete, fk.OnUpdate = fkActions[del], fkActions[upd]
		fs = append(fs, f)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	for _, f := range fs {
		fk := f.fk
		p.know("c", fk.Schema, fk.Table, fk.Name)
		if f.isPart || f.partitioned {
			ok, err := p.inspectPartitions(ctx, q, f.rel, f.oid, &fk, f.isPart)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
		}
		colTable := fk.qtable()
		if fk.Root != "" {
			colTable = pgx.Identifier{fk.RootSchema, fk.Root}.Sanitize()
		}
		if err := q.QueryRow(ctx, `SELECT a.attnotnull, EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = a.attrelid AND i.indkey[0] = a.attnum)
			FROM pg_attribute a WHERE a.attrelid = $1::regclass AND a.attname = $2`, colTable, fk.Column).Scan(&fk.NotNull, &fk.Indexed); err != nil {
			return err
		}
		p.FKs = append(p.FKs, fk)
	}
	p.refusePartialPartitions()
	return nil
}

// inspectPartitions fills fk's partitioned table, partitions and clones.
// It reports false, with a refusal, for a shape it cannot migrate.
func (p *Plan) inspectPartitions(ctx context.Context, q pgx.Tx, rel, oid uint32, fk *FK, isPart bool) (bool, error) {
	var depth int
	var root uint32
	if err := q.QueryRow(ctx, `SELECT c.oid, n.nspname, c.relname, (SELECT count(*) FROM pg_partition_ancestors($1))::int
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = pg_partition_root($1)`, rel).Scan(&root, &fk.RootSchema, &fk.Root, &depth); err != nil {
		return false, err
	}
	rootName := pgx.Identifier{fk.RootSchema, fk.Root}.Sanitize()
	multi := func(what string) (bool, error) {
		p.refuse("sub-partitioned table", rootName, "%s: migrate handles one level of partitions", "move the foreign keys to tables partitioned one level deep", what)
		return false, nil
	}
	if isPart && depth != 2 || !isPart && depth != 1 {
		return multi(fmt.Sprintf("%s, which holds foreign key %s, is a partition of a partition", fk.qtable(), fk.Name))
	}
	rows, err := q.Query(ctx, `SELECT n.nspname::text, c.relname::text, t.level, c.relkind::text FROM pg_partition_tree($1) t
		JOIN pg_class c ON c.oid = t.relid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE t.relid <> $1 ORDER BY 1, 2`, root)
	if err != nil {
		return false, err
	}
	var deep, foreign string
	for rows.Next() {
		var schema, table, kind string
		var level int
		if err := rows.Scan(&schema, &table, &level, &kind); err != nil {
			return false, err
		}
		name := pgx.Identifier{schema, table}.Sanitize()
		switch {
		case level != 1 || kind == "p":
			deep = name
		case kind == "f":
			foreign = name
		}
		fk.Leaves = append(fk.Leaves, name)
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	if deep != "" {
		return multi(deep + " is partitioned itself")
	}
	if foreign != "" {
		p.refuse("foreign table partition", foreign, "it is a foreign table: migrate cannot add a column or trigger there", "detach it for the migration")
		return false, nil
	}
	var attrs []int16
	var exprs string
	var num int16
	if err := q.QueryRow(ctx, `SELECT pt.partattrs::int2[], coalesce(pt.partexprs::text, ''),
			(SELECT attnum FROM pg_attribute WHERE attrelid = $1 AND attname = $2)
		FROM pg_partitioned_table pt WHERE pt.partrelid = $1`, root, fk.Column).Scan(&attrs, &exprs, &num); err != nil {
		return false, err
	}
	if slices.Contains(attrs, num) || usesAttnum(exprs, map[int16]bool{num: true}) {
		p.refuse("partition key", rootName+"."+fk.Column, "%s is partitioned by %s: new values would belong in other partitions",
			"partition it by another column", rootName, fk.Column)
		return false, nil
	}
	if !isPart {
		clones := map[string]string{}
		rows, err := q.Query(ctx, `SELECT n.nspname::text, c.relname::text, cc.conname::text FROM pg_constraint cc
			JOIN pg_class c ON c.oid = cc.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE cc.conparentid = $1`, oid)
		if err != nil {
			return false, err
		}
		for rows.Next() {
			var schema, table, name string
			if err := rows.Scan(&schema, &table, &name); err != nil {
				return false, err
			}
			clones[pgx.Identifier{schema, table}.Sanitize()] = name
		}
		if err := rows.Err(); err != nil {
			return false, err
		}
		for _, l := range fk.Leaves {
			fk.Clones = append(fk.Clones, clones[l])
			s, t := splitQualified(l)
			p.know("c", s, t, clones[l])
		}
	}
	return true, nil
}

// refusePartialPartitions refuses a column of a partitioned table whose
// foreign keys are declared on some of its partitions but not all: the
// column moves on every partition.
func (p *Plan) refusePartialPartitions() {
	for _, c := range p.childColumns() {
		if c.leaves[0] == c.qtable() {
			continue // not partitioned
		}
		declared := map[string]bool{}
		onRoot := false
		for _, fk := range p.FKs {
			if fk.RootSchema == c.schema && fk.Root == c.table && fk.Column == c.column {
				onRoot = onRoot || fk.Clones != nil // declared on the partitioned table: on every partition
				declared[fk.qtable()] = true
			}
		}
		for _, l := range c.leaves {
			if onRoot {
				break
			}
			if !declared[l] {
				p.refuse("partition without the foreign key", l+"."+c.column,
					"other partitions of %s have a foreign key on %s to %s, this one has none, and the column moves on every partition",
					"declare the foreign key on every partition, or on the partitioned table", c.qtable(), c.column, p.Table)
				break
			}
		}
	}
}

// inspectChains refuses foreign keys that reference a moved foreign key
// column (the key of a 1:1 extension table that another table
// references), and table inheritance on referencing tables.
func (p *Plan) inspectChains(ctx context.Context, q pgx.Tx, oid uint32) error {
	for _, c := range p.childColumns() {
		if err := p.refuseInheritance(ctx, q, c.qtable()); err != nil {
			return err
		}
		tables := c.leaves
		if c.leaves[0] != c.qtable() {
			tables = append([]string{c.qtable()}, c.leaves...)
		}
		for _, t := range tables {
			rows, err := q.Query(ctx, `SELECT con.conname::text, con.conrelid::regclass::text FROM pg_constraint con
				WHERE con.contype = 'f' AND con.confrelid = $1::regclass AND con.conparentid = 0
				AND (SELECT attnum FROM pg_attribute WHERE attrelid = con.confrelid AND attname = $2) = ANY (con.confkey)`, t, c.column)
			if err != nil {
				return err
			}
			var names, tabs []string
			for rows.Next() {
				var n, tb string
				if err := rows.Scan(&n, &tb); err != nil {
					return err
				}
				names, tabs = append(names, n), append(tabs, tb)
			}
			if err := rows.Err(); err != nil {
				return err
			}
			for i := range names {
				p.refuse("foreign key to a moved column", names[i]+" on "+tabs[i],
					"it references %s.%s, which moves with %s's key: migrate moves keys one table deep",
					"drop it before the migration, and after finish re-create it once its column holds the new values", t, c.column, p.Table)
			}
		}
	}
	return nil
}

// inspectLeftovers refuses names the migration would create that exist:
// another migration's columns, or a column the swap would rename to.
func (p *Plan) inspectLeftovers(ctx context.Context, q pgx.Tx, oid uint32) error {
	type want struct{ table, column, why string }
	var ws []want
	ws = append(ws, want{p.qtable(), p.newCol(), "the new key column"}, want{p.qtable(), p.oldCol(), "what the swap renames " + p.Key + " to"})
	for _, c := range p.childColumns() {
		ws = append(ws, want{c.qtable(), c.newCol(), "the new foreign key column"}, want{c.qtable(), c.oldCol(), "what the swap renames " + c.column + " to"})
	}
	for _, w := range ws {
		var exists bool
		if err := q.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2 AND NOT attisdropped)",
			w.table, w.column).Scan(&exists); err != nil {
			return err
		}
		if exists {
			work := "rename or drop it first"
			if strings.HasSuffix(w.column, newSuffix) {
				work = "another migration is in progress or was left behind: finish or abort it first"
			}
			p.refuse("column in the way", w.table+"."+w.column, "it is %s", work, w.why)
		}
	}
	var taken []string
	if err := q.QueryRow(ctx, `SELECT array(SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = ANY ($2))`, p.Schema,
		[]string{p.Table + "_idgen_map", p.Table + "_idgen_seq"}).Scan(&taken); err != nil {
		return err
	}
	for _, t := range taken {
		p.refuse("relation in the way", t, "the migration creates it", "another migration is in progress or was left behind: finish or abort it first")
	}
	return p.inspectOthers(ctx, q)
}

// inspectOthers refuses a migration whose tables another migration
// recorded in the database (in any schema) still changes.
func (p *Plan) inspectOthers(ctx context.Context, q pgx.Tx) error {
	var schemas []string
	if err := q.QueryRow(ctx, `SELECT array(SELECT n.nspname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relname = 'idgen_migrate_state' AND c.relkind = 'r' ORDER BY 1)`).Scan(&schemas); err != nil {
		return err
	}
	mine := map[string]bool{p.qtable(): true}
	for _, c := range p.childColumns() {
		mine[c.qtable()] = true
	}
	for _, schema := range schemas {
		others, err := readOthers(ctx, q, schema)
		if err != nil {
			return err
		}
		for _, o := range others {
			if o.Schema == p.Schema && o.Table == p.Table {
				continue
			}
			tables := []string{o.qtable()}
			for _, c := range o.childColumns() {
				tables = append(tables, c.qtable())
			}
			for _, t := range tables {
				if mine[t] {
					p.refuse("migration in progress", t, "the migration of %s (phase %s) changes it too",
						"finish or abort that migration first", o.qtable(), o.Phase)
					break
				}
			}
		}
	}
	return nil
}

// readOthers reads the migrations recorded in schema's state table, in a
// savepoint: a state table dropped (with its schema, or by Finish) after
// inspectOthers listed it records no migration, and is skipped rather than
// failing the inspection with "relation does not exist".
func readOthers(ctx context.Context, q pgx.Tx, schema string) ([]Plan, error) {
	sp, err := q.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer sp.Rollback(ctx)
	// undefined_table, invalid_schema_name: dropped since listed
	dropped := func(err error) bool {
		var pgErr *pgconn.PgError
		return errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "3F000")
	}
	rows, err := sp.Query(ctx, "SELECT tbl, phase, fks FROM "+pgx.Identifier{schema, "idgen_migrate_state"}.Sanitize())
	if dropped(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var others []Plan
	for rows.Next() {
		o := Plan{Schema: schema}
		if err := rows.Scan(&o.Table, &o.Phase, &o.FKs); err != nil {
			rows.Close()
			return nil, err
		}
		others = append(others, o)
	}
	if err := rows.Err(); dropped(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return others, sp.Commit(ctx)
}

// varattno finds the column numbers a node tree (pg_node_tree as text)
// reads.
var varattno = lazyre.MustCompile(`:varattno (\d+)`)

func usesAttnum(tree string, nums map[int16]bool) bool {
	for _, m := range varattno().FindAllStringSubmatch(tree, -1) {
		n, _ := strconv.Atoi(m[1])
		if nums[int16(n)] {
			return true
		}
	}
	return false
}

const indexQuery = `SELECT i.indexrelid, ic.relname::text, ic.relkind = 'I', am.amname::text, i.indisunique, i.indisvalid,
		i.indisclustered, i.indisreplident, i.indnkeyatts::int, coalesce(i.indexprs::text, ''), coalesce(i.indpred::text, ''),
		coalesce(pg_get_expr(i.indpred, i.indrelid, true), ''), coalesce(array_to_string(ic.reloptions, ', '), ''),
		coalesce((SELECT spcname::text FROM pg_tablespace WHERE oid = ic.reltablespace), ''),
		coalesce((to_jsonb(i)->>'indnullsnotdistinct')::bool, false),
		coalesce(con.contype::text, ''), coalesce(con.condeferrable, false), coalesce(con.condeferred, false),
		coalesce(obj_description(i.indexrelid, 'pg_class'), ''), coalesce(obj_description(con.oid, 'pg_constraint'), ''),
		pg_get_indexdef(i.indexrelid), EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhrelid = i.indexrelid)
	FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam
	LEFT JOIN pg_constraint con ON con.conindid = i.indexrelid AND con.conrelid = i.indrelid AND con.contype IN ('p', 'u', 'x')
	WHERE i.indrelid = $1::regclass ORDER BY ic.relname`

const indexKeysQuery = `SELECT k.attnum::int, coalesce(a.attname::text, ''), pg_get_indexdef(i.indexrelid, k.n::int, true),
		CASE WHEN k.coll IS NULL OR k.coll = 0 OR k.coll = coalesce(a.attcollation, 100) THEN ''
			ELSE ' COLLATE ' || (SELECT quote_ident(cn.nspname) || '.' || quote_ident(co.collname) FROM pg_collation co
				JOIN pg_namespace cn ON cn.oid = co.collnamespace WHERE co.oid = k.coll) END
		|| coalesce((SELECT ' ' || quote_ident(opn.nspname) || '.' || quote_ident(opc.opcname) FROM pg_opclass opc
			JOIN pg_namespace opn ON opn.oid = opc.opcnamespace WHERE opc.oid = k.cls AND NOT opc.opcdefault), '')
		|| CASE WHEN k.opt IS NULL THEN '' WHEN k.opt & 3 = 1 THEN ' DESC NULLS LAST' WHEN k.opt & 1 = 1 THEN ' DESC'
			WHEN k.opt & 2 = 2 THEN ' NULLS FIRST' ELSE '' END
	FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey::int2[], i.indcollation::oid[], i.indclass::oid[], i.indoption::int2[])
		WITH ORDINALITY k(attnum, coll, cls, opt, n)
	LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum AND k.attnum > 0
	WHERE i.indexrelid = $1 ORDER BY k.n`

// inspectIndexes finds the indexes on the moved columns: on the table, on
// each referencing table and on its partitions.
func (p *Plan) inspectIndexes(ctx context.Context, q pgx.Tx, oid uint32) error {
	if err := p.indexesOn(ctx, q, p.Schema, p.Table, p.moved(p.Schema, p.Table)); err != nil {
		return err
	}
	for _, c := range p.childColumns() {
		if c.schema == p.Schema && c.table == p.Table {
			continue // self-reference: done above
		}
		moved := p.moved(c.schema, c.table)
		if err := p.indexesOn(ctx, q, c.schema, c.table, moved); err != nil {
			return err
		}
		if c.leaves[0] == c.qtable() {
			continue
		}
		for _, l := range c.leaves {
			s, t := splitQualified(l)
			if err := p.indexesOn(ctx, q, s, t, moved); err != nil {
				return err
			}
		}
	}
	return nil
}

// indexesOn adds the indexes of schema.table that use a moved column to
// p.Indexes, or refuses them.
func (p *Plan) indexesOn(ctx context.Context, q pgx.Tx, schema, table string, moved map[string]bool) error {
	qt := pgx.Identifier{schema, table}.Sanitize()
	nums := map[int16]bool{}
	rows, err := q.Query(ctx, "SELECT attnum FROM pg_attribute WHERE attrelid = $1::regclass AND attname = ANY ($2)", qt, keys(moved))
	if err != nil {
		return err
	}
	for rows.Next() {
		var n int16
		if err := rows.Scan(&n); err != nil {
			return err
		}
		nums[n] = true
	}
	if err := rows.Err(); err != nil {
		return err
	}
	type found struct {
		ix                           Index
		oid                          uint32
		partitioned, valid, attached bool
		nkeys                        int
		exprs, pred, contype         string
		deferrable, deferred         bool
	}
	var fs []found
	rows, err = q.Query(ctx, indexQuery, qt)
	if err != nil {
		return err
	}
	for rows.Next() {
		var f found
		ix := &f.ix
		if err := rows.Scan(&f.oid, &ix.Name, &f.partitioned, &ix.Method, &ix.Unique, &f.valid, &ix.Clustered, &ix.ReplicaIdentity,
			&f.nkeys, &f.exprs, &f.pred, &ix.Where, &ix.With, &ix.Tablespace, &ix.NullsNotDistinct, &f.contype, &f.deferrable, &f.deferred,
			&ix.Comment, &ix.ConstraintComment, &ix.Def, &f.attached); err != nil {
			return err
		}
		ix.Schema, ix.Table = schema, table
		fs = append(fs, f)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, f := range fs {
		ix := f.ix
		if strings.Contains(ix.Name, "_idgen_") {
			continue
		}
		rows, err := q.Query(ctx, indexKeysQuery, f.oid)
		if err != nil {
			return err
		}
		uses := false
		for n := 1; rows.Next(); n++ {
			var num int16
			var col, expr, opts string
			if err := rows.Scan(&num, &col, &expr, &opts); err != nil {
				return err
			}
			uses = uses || nums[num]
			switch {
			case n > f.nkeys:
				ix.Include = append(ix.Include, col)
			case num == 0:
				ix.Keys = append(ix.Keys, IndexKey{Expr: "(" + expr + ")", Opts: opts})
			default:
				ix.Keys = append(ix.Keys, IndexKey{Column: col, Opts: opts})
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		exprUses, predUses := usesAttnum(f.exprs, nums), usesAttnum(f.pred, nums)
		if !uses && !exprUses && !predUses || f.attached {
			continue // unaffected, or built through its partitioned table's index
		}
		obj := "index " + ix.qname(ix.Name)
		switch {
		case !f.valid:
			p.refuse("invalid index", obj, "it is not valid (an interrupted CREATE INDEX CONCURRENTLY)", "drop it, or REINDEX it, first")
			continue
		case f.contype == "x":
			p.refuse("exclusion constraint", ix.Name+" on "+qt, "it uses a moved column", "drop it before the migration and add it back after finish")
			continue
		case exprUses:
			p.refuse("expression index", obj, "an expression of it uses a moved column", "drop it before the migration and create it again after finish")
			continue
		case predUses:
			p.refuse("partial index", obj, "its WHERE clause uses a moved column", "drop it before the migration and create it again after finish")
			continue
		case f.partitioned && (ix.Unique || f.contype != ""):
			p.refuse("unique index on a partitioned table", obj,
				"PostgreSQL cannot turn an index into a primary key or unique constraint of a partitioned table (USING INDEX)",
				"drop it before the migration and add it back after finish")
			continue
		}
		switch f.contype {
		case "p":
			ix.Constraint = "PRIMARY KEY"
		case "u":
			ix.Constraint = "UNIQUE"
		}
		if f.deferrable {
			ix.Deferrable = "DEFERRABLE INITIALLY IMMEDIATE"
			if f.deferred {
				ix.Deferrable = "DEFERRABLE INITIALLY DEFERRED"
			}
		}
		if f.partitioned {
			rows, err := q.Query(ctx, `SELECT n.nspname::text, t.relname::text, c.relname::text FROM pg_inherits h
				JOIN pg_class c ON c.oid = h.inhrelid JOIN pg_index x ON x.indexrelid = c.oid JOIN pg_class t ON t.oid = x.indrelid
				JOIN pg_namespace n ON n.oid = t.relnamespace WHERE h.inhparent = $1 ORDER BY 1, 2`, f.oid)
			if err != nil {
				return err
			}
			for rows.Next() {
				var part IndexPart
				if err := rows.Scan(&part.Schema, &part.Table, &part.Name); err != nil {
					return err
				}
				ix.Parts = append(ix.Parts, part)
			}
			if err := rows.Err(); err != nil {
				return err
			}
		}
		p.Indexes = append(p.Indexes, ix)
		p.knowIndex(ix)
	}
	return nil
}

func keys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// inspectSequence finds the sequence of the key's default or identity.
func (p *Plan) inspectSequence(ctx context.Context, q pgx.Tx, oid uint32) error {
	var owned string
	if err := q.QueryRow(ctx, `SELECT a.attidentity <> '', coalesce(pg_get_serial_sequence($1, $2), '')
		FROM pg_attribute a WHERE a.attrelid = $1::regclass AND a.attname = $2`, p.qtable(), p.Key).Scan(&p.Identity, &owned); err != nil {
		return err
	}
	var seqs []string
	var shared bool
	err := q.QueryRow(ctx, `SELECT array(SELECT s.oid::regclass::text FROM pg_attrdef ad
			JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid AND d.refclassid = 'pg_class'::regclass
			JOIN pg_class s ON s.oid = d.refobjid AND s.relkind = 'S'
			JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
			WHERE ad.adrelid = $1 AND a.attname = $2),
		EXISTS (SELECT 1 FROM pg_attrdef ad JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
			JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid AND d.refclassid = 'pg_class'::regclass
			JOIN pg_depend o ON o.refclassid = 'pg_class'::regclass AND o.refobjid = d.refobjid AND o.deptype = 'n' AND o.objid <> ad.oid
			WHERE ad.adrelid = $1 AND a.attname = $2)`, oid, p.Key).Scan(&seqs, &shared)
	if err != nil {
		return err
	}
	switch {
	case owned != "":
		p.Sequence, p.SequenceOwned = owned, true
	case len(seqs) == 1:
		p.Sequence, p.SequenceShared = seqs[0], shared
	}
	return nil
}

// inspectTriggers finds whether the backfill can run with
// session_replication_role = replica, and the triggers and rules that fire
// for each backfilled row all the same.
func (p *Plan) inspectTriggers(ctx context.Context, q pgx.Tx, oid uint32) error {
	sp, err := q.Begin(ctx)
	if err != nil {
		return err
	}
	_, err = sp.Exec(ctx, "SET LOCAL session_replication_role = replica")
	p.Quiet = err == nil
	if err := sp.Rollback(ctx); err != nil {
		return err
	}
	tables := []string{p.qtable()}
	for _, c := range p.childColumns() {
		tables = append(tables, c.qtable())
		if c.leaves[0] != c.qtable() {
			tables = append(tables, c.leaves...)
		}
	}
	enabled := []string{"O", "A"}
	if p.Quiet {
		enabled = []string{"R", "A"}
	}
	return q.QueryRow(ctx, `SELECT array(
		SELECT format('trigger %I on %s', t.tgname, t.tgrelid::regclass) FROM pg_trigger t
		WHERE t.tgrelid = ANY ($1::regclass[]) AND NOT t.tgisinternal AND t.tgparentid = 0 AND strpos(t.tgname, '_idgen_') = 0
			AND t.tgtype & 16 <> 0 AND cardinality(t.tgattr::int2[]) = 0 AND t.tgenabled::text = ANY ($2)
		UNION ALL
		SELECT format('rule %I on %s', r.rulename, r.ev_class::regclass) FROM pg_rewrite r
		WHERE r.ev_class = ANY ($1::regclass[]) AND r.ev_type = '2' AND r.ev_enabled::text = ANY ($2)
		ORDER BY 1)`, tables, enabled).Scan(&p.Fire)
}
