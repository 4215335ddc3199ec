package migrate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// A Dependent is a view, materialized view, rule or trigger that uses a
// column the migration moves (the key, a foreign key column), or a view
// built on such a view. PostgreSQL binds them to column numbers, not
// names: after the swap they would read the *_old columns. The swap
// transaction drops and re-creates them from their definitions (a
// materialized view is filled again there), with their options, owner,
// grants, comments, rules, triggers and indexes, so that they read the new
// columns; Revert does the same back.
type Dependent struct {
	Kind string // "view", "materialized view", "rule", "trigger"
	Name string // schema-qualified; "name on table" for a rule or trigger
}

// A depSet is what the swap (or revert) transaction does to the
// dependents: drops first, creates last.
type depSet struct {
	list     []Dependent
	drops    []string
	creates  []string
	refusals []Refusal
}

type depView struct {
	oid   uint32
	name  string
	after []uint32 // views of the set it is built on
}

type depReader struct {
	p        *Plan
	q        querier
	d        *depSet
	views    map[uint32]*depView
	queue    []uint32
	rules    []uint32
	triggers []uint32
	seen     map[string]bool
}

// inspectDependents lists the plan's dependents and refuses those it
// cannot re-create.
func (p *Plan) inspectDependents(ctx context.Context, q pgx.Tx, _ uint32) error {
	d, err := p.readDeps(ctx, q)
	if err != nil {
		return err
	}
	p.Dependents, p.deps = d.list, d
	p.Refusals = append(p.Refusals, d.refusals...)
	return nil
}

// movedRels returns each table with moved columns and their names: the
// migrated table, the referencing tables and their partitions.
func (p *Plan) movedRels() []struct {
	table string
	cols  []string
} {
	type rel = struct {
		table string
		cols  []string
	}
	rels := []rel{{p.qtable(), keys(p.moved(p.Schema, p.Table))}}
	for _, c := range p.childColumns() {
		cols := keys(p.moved(c.schema, c.table))
		if !slices.ContainsFunc(rels, func(r rel) bool { return r.table == c.qtable() }) {
			rels = append(rels, rel{c.qtable(), cols})
		}
		for _, l := range c.leaves {
			if l != c.qtable() && !slices.ContainsFunc(rels, func(r rel) bool { return r.table == l }) {
				rels = append(rels, rel{l, cols})
			}
		}
	}
	return rels
}

// readDeps reads the dependents of the moved columns and the statements
// that drop and re-create them. q must have search_path = pg_catalog.
func (p *Plan) readDeps(ctx context.Context, q querier) (*depSet, error) {
	r := &depReader{p: p, q: q, d: &depSet{}, views: map[uint32]*depView{}, seen: map[string]bool{}}
	for _, rel := range p.movedRels() {
		if err := r.onColumns(ctx, rel.table, rel.cols); err != nil {
			return nil, err
		}
	}
	for len(r.queue) > 0 {
		v := r.queue[0]
		r.queue = r.queue[1:]
		if err := r.onView(ctx, v); err != nil {
			return nil, err
		}
	}
	if err := r.statements(ctx); err != nil {
		return nil, err
	}
	return r.d, nil
}

// refuse records a dependent the swap cannot re-create.
func (r *depReader) refuse(ctx context.Context, shape, class string, objid uint32, why, workaround string) error {
	var obj string
	if err := r.q.QueryRow(ctx, "SELECT pg_describe_object($1::regclass, $2, 0)", class, objid).Scan(&obj); err != nil {
		return err
	}
	if r.seen["refuse "+obj] {
		return nil
	}
	r.seen["refuse "+obj] = true
	r.d.refusals = append(r.d.refusals, Refusal{Shape: shape, Object: obj, Why: why, Workaround: workaround})
	return nil
}

type dependency struct {
	class string
	objid uint32
	col   string
}

func (r *depReader) depending(ctx context.Context, sql string, args ...any) ([]dependency, error) {
	rows, err := r.q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ds []dependency
	for rows.Next() {
		var d dependency
		if err := rows.Scan(&d.class, &d.objid, &d.col); err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	return ds, rows.Err()
}

// onColumns classifies the objects that depend on the columns cols of
// table.
func (r *depReader) onColumns(ctx context.Context, table string, cols []string) error {
	ds, err := r.depending(ctx, `SELECT d.classid::regclass::text, d.objid, a.attname::text FROM pg_depend d
		JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
		WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = $1::regclass AND a.attname = ANY ($2) AND d.deptype <> 'i'
		ORDER BY 1, 2`, table, cols)
	if err != nil {
		return err
	}
	p := r.p
	for _, d := range ds {
		renamed := fmt.Sprintf("it uses %s.%s by column number: after the swap it would use %s", table, d.col, d.col+"_old")
		switch d.class {
		case "pg_class":
			var kind string
			if err := r.q.QueryRow(ctx, "SELECT relkind::text FROM pg_class WHERE oid = $1", d.objid).Scan(&kind); err != nil {
				return err
			}
			if kind != "i" && kind != "I" && kind != "S" { // indexes: inspectIndexes; sequences: owned
				if err := r.refuse(ctx, "dependent object", d.class, d.objid, renamed, "drop it before the migration and re-create it after finish"); err != nil {
					return err
				}
			}
		case "pg_constraint":
			var kind, schema, tbl, name string
			if err := r.q.QueryRow(ctx, `SELECT con.contype::text, n.nspname::text, c.relname::text, con.conname::text FROM pg_constraint con
				JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE con.oid = $1`, d.objid).Scan(&kind, &schema, &tbl, &name); err != nil {
				return err
			}
			switch {
			case kind == "f" && (p.isKnown("c", schema, tbl, name) || schema == p.Schema && tbl == p.Table && d.col == p.Key):
				// a moved foreign key, or the key's own (refused by inspectKeyFK)
			case kind == "f":
				if err := r.refuse(ctx, "foreign key on a moved column", d.class, d.objid,
					fmt.Sprintf("it uses %s.%s, which moves with %s's key, to reference another table", table, d.col, p.Table),
					"drop it before the migration and add it back after finish"); err != nil {
					return err
				}
			case kind == "c" && !strings.Contains(name, "_idgen_"):
				if err := r.refuse(ctx, "check constraint", d.class, d.objid, renamed+", and finish would drop it with that column",
					"drop it before the migration and add it back after finish"); err != nil {
					return err
				}
			}
			// p, u: indexes; x: refused by inspectIndexes; n, t: follow their column or trigger
		case "pg_attrdef":
			var col string
			if err := r.q.QueryRow(ctx, `SELECT a.attname::text FROM pg_attrdef ad JOIN pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
				WHERE ad.oid = $1`, d.objid).Scan(&col); err != nil {
				return err
			}
			if col != d.col {
				if err := r.refuse(ctx, "generated column", d.class, d.objid, renamed,
					"drop the generated column before the migration and add it back after finish"); err != nil {
					return err
				}
			}
		case "pg_rewrite":
			var ev uint32
			var kind string
			if err := r.q.QueryRow(ctx, `SELECT r.ev_class, c.relkind::text FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
				WHERE r.oid = $1`, d.objid).Scan(&ev, &kind); err != nil {
				return err
			}
			if kind == "v" || kind == "m" {
				r.addView(ctx, ev, 0)
			} else {
				r.addRule(d.objid)
			}
		case "pg_trigger":
			var skip bool
			var rel uint32
			var kind string
			if err := r.q.QueryRow(ctx, `SELECT t.tgisinternal OR t.tgparentid <> 0 OR strpos(t.tgname, '_idgen_') > 0, t.tgrelid, c.relkind::text
				FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE t.oid = $1`, d.objid).Scan(&skip, &rel, &kind); err != nil {
				return err
			}
			switch {
			case skip:
			case kind == "v":
				r.addView(ctx, rel, 0)
			default:
				r.addTrigger(d.objid)
			}
		case "pg_proc":
			if err := r.refuse(ctx, "function", d.class, d.objid, renamed+" (an SQL-standard body, BEGIN ATOMIC, binds columns when it is created)",
				"re-create it with a string body (AS $$ ... $$), which finds columns by name when it runs, or drop it and re-create it after the swap"); err != nil {
				return err
			}
		case "pg_policy":
			if err := r.refuse(ctx, "row security policy", d.class, d.objid, renamed, "drop it before the migration and create it again after the swap"); err != nil {
				return err
			}
		case "pg_statistic_ext":
			if err := r.refuse(ctx, "extended statistics", d.class, d.objid, renamed, "drop them before the migration and create them again after finish"); err != nil {
				return err
			}
		default:
			if err := r.refuse(ctx, "dependent object", d.class, d.objid, renamed, "drop it before the migration and re-create it after finish"); err != nil {
				return err
			}
		}
	}
	return nil
}

// addView adds the view or materialized view oid to the set, built on
// the view of the set from (0 when found through a column).
func (r *depReader) addView(ctx context.Context, oid, from uint32) {
	v, ok := r.views[oid]
	if !ok {
		v = &depView{oid: oid}
		r.views[oid] = v
		r.queue = append(r.queue, oid)
	}
	if from != 0 && from != oid && !slices.Contains(v.after, from) {
		v.after = append(v.after, from)
	}
}

func (r *depReader) addRule(oid uint32) {
	if !slices.Contains(r.rules, oid) {
		r.rules = append(r.rules, oid)
	}
}

func (r *depReader) addTrigger(oid uint32) {
	if !slices.Contains(r.triggers, oid) {
		r.triggers = append(r.triggers, oid)
	}
}

// onView classifies what depends on the view v (its relation or its row
// type): views built on it join the set; its own rules, triggers, indexes
// and defaults are re-created with it; rules on other tables are
// re-created; anything else stops the swap.
func (r *depReader) onView(ctx context.Context, v uint32) error {
	ds, err := r.depending(ctx, `SELECT d.classid::regclass::text, d.objid, '' FROM pg_depend d
		WHERE d.deptype <> 'i' AND ((d.refclassid = 'pg_class'::regclass AND d.refobjid = $1)
			OR (d.refclassid = 'pg_type'::regclass AND d.refobjid = (SELECT reltype FROM pg_class WHERE oid = $1)))
		ORDER BY 1, 2`, v)
	if err != nil {
		return err
	}
	for _, d := range ds {
		var rel uint32
		var kind string
		switch d.class {
		case "pg_rewrite":
			if err := r.q.QueryRow(ctx, `SELECT r.ev_class, c.relkind::text FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
				WHERE r.oid = $1`, d.objid).Scan(&rel, &kind); err != nil {
				return err
			}
			switch {
			case rel == v:
			case kind == "v" || kind == "m":
				r.addView(ctx, rel, v)
			default:
				r.addRule(d.objid)
			}
			continue
		case "pg_trigger":
			err = r.q.QueryRow(ctx, "SELECT tgrelid FROM pg_trigger WHERE oid = $1", d.objid).Scan(&rel)
		case "pg_class":
			err = r.q.QueryRow(ctx, "SELECT coalesce((SELECT indrelid FROM pg_index WHERE indexrelid = $1), 0)", d.objid).Scan(&rel)
		case "pg_attrdef":
			err = r.q.QueryRow(ctx, "SELECT adrelid FROM pg_attrdef WHERE oid = $1", d.objid).Scan(&rel)
		case "pg_type":
			continue // the row type's array type
		}
		if err != nil {
			return err
		}
		if rel == v {
			continue // re-created with the view
		}
		var name string
		if err := r.q.QueryRow(ctx, "SELECT $1::regclass::text", v).Scan(&name); err != nil {
			return err
		}
		if err := r.refuse(ctx, "object on a dependent view", d.class, d.objid,
			fmt.Sprintf("it uses the view %s, which the swap re-creates on the new columns", name),
			"drop it before the migration and re-create it after the swap"); err != nil {
			return err
		}
	}
	return nil
}

// order returns the views of the set, each after those it is built on.
func (r *depReader) order(ctx context.Context) ([]*depView, error) {
	for _, v := range r.views {
		if err := r.q.QueryRow(ctx, "SELECT $1::regclass::text", v.oid).Scan(&v.name); err != nil {
			return nil, err
		}
	}
	var out []*depView
	done := map[uint32]bool{}
	for len(out) < len(r.views) {
		var ready []*depView
		for _, v := range r.views {
			if done[v.oid] {
				continue
			}
			ok := true
			for _, a := range v.after {
				ok = ok && done[a]
			}
			if ok {
				ready = append(ready, v)
			}
		}
		if len(ready) == 0 {
			return nil, fmt.Errorf("migrate: views depend on each other in a cycle")
		}
		slices.SortFunc(ready, func(a, b *depView) int { return strings.Compare(a.name, b.name) })
		for _, v := range ready {
			done[v.oid] = true
		}
		out = append(out, ready...)
	}
	return out, nil
}

// viewSQL is the definition of a view as statements that re-create it
// after a DROP: CREATE, owner, grants, comments, column defaults, its
// rules, triggers and indexes (materialized views).
const viewSQL = `WITH v AS (SELECT c.oid, c.relkind = 'm' AS mat, format('%I.%I', n.nspname, c.relname) AS name,
		CASE c.relkind WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'VIEW' END AS kind, c.relowner, c.relacl, c.reloptions,
		c.relispopulated, c.reltablespace
	FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = $1)
SELECT s FROM (
	SELECT 1 AS o, 0 AS i, format('CREATE %s %s%s%s AS %s%s', v.kind, v.name,
		coalesce(' WITH (' || array_to_string(v.reloptions, ', ') || ')', ''),
		coalesce(' TABLESPACE ' || (SELECT quote_ident(spcname) FROM pg_tablespace WHERE oid = v.reltablespace AND v.mat), ''),
		rtrim(btrim(pg_get_viewdef(v.oid), E' \n'), ';'),
		CASE WHEN NOT v.mat THEN '' WHEN v.relispopulated THEN ' WITH DATA' ELSE ' WITH NO DATA' END) AS s FROM v
	UNION ALL SELECT 2, 0, format('ALTER %s %s OWNER TO %I', v.kind, v.name, pg_get_userbyid(v.relowner)) FROM v
		WHERE pg_get_userbyid(v.relowner) <> current_user
	UNION ALL SELECT 3, 0, format('REVOKE %s ON %s FROM %I', d.privilege_type, v.name, pg_get_userbyid(v.relowner))
		FROM v, aclexplode(acldefault('r', v.relowner)) d WHERE v.relacl IS NOT NULL AND d.grantee = v.relowner
		AND NOT EXISTS (SELECT 1 FROM aclexplode(v.relacl) a WHERE a.grantee = v.relowner AND a.privilege_type = d.privilege_type)
	UNION ALL SELECT 4, 0, format('GRANT %s ON %s TO %s%s', a.privilege_type, v.name,
		CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END,
		CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
		FROM v, aclexplode(v.relacl) a WHERE a.grantee <> v.relowner
	UNION ALL SELECT 5, at.attnum, format('GRANT %s (%I) ON %s TO %s%s', a.privilege_type, at.attname, v.name,
		CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END,
		CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END)
		FROM v JOIN pg_attribute at ON at.attrelid = v.oid, aclexplode(at.attacl) a
	UNION ALL SELECT 6, 0, format('COMMENT ON %s %s IS %L', v.kind, v.name, d.description)
		FROM v JOIN pg_description d ON d.objoid = v.oid AND d.classoid = 'pg_class'::regclass AND d.objsubid = 0
	UNION ALL SELECT 7, at.attnum, format('COMMENT ON COLUMN %s.%I IS %L', v.name, at.attname, d.description)
		FROM v JOIN pg_attribute at ON at.attrelid = v.oid
		JOIN pg_description d ON d.objoid = v.oid AND d.classoid = 'pg_class'::regclass AND d.objsubid = at.attnum
	UNION ALL SELECT 8, at.attnum, format('ALTER %s %s ALTER COLUMN %I SET DEFAULT %s', v.kind, v.name, at.attname, pg_get_expr(ad.adbin, ad.adrelid))
		FROM v JOIN pg_attrdef ad ON ad.adrelid = v.oid JOIN pg_attribute at ON at.attrelid = v.oid AND at.attnum = ad.adnum
	UNION ALL SELECT 9, r.oid::int, rtrim(pg_get_ruledef(r.oid), ';') FROM v JOIN pg_rewrite r ON r.ev_class = v.oid AND r.rulename <> '_RETURN'
	UNION ALL SELECT 10, t.oid::int, pg_get_triggerdef(t.oid) FROM v JOIN pg_trigger t ON t.tgrelid = v.oid AND NOT t.tgisinternal
	UNION ALL SELECT 11, i.indexrelid::int, pg_get_indexdef(i.indexrelid) FROM v JOIN pg_index i ON i.indrelid = v.oid
	UNION ALL SELECT 12, i.indexrelid::int, format('ALTER MATERIALIZED VIEW %s CLUSTER ON %I', v.name, ic.relname)
		FROM v JOIN pg_index i ON i.indrelid = v.oid AND i.indisclustered JOIN pg_class ic ON ic.oid = i.indexrelid
	UNION ALL SELECT 13, i.indexrelid::int, format('COMMENT ON INDEX %s IS %L', i.indexrelid::regclass, d.description)
		FROM v JOIN pg_index i ON i.indrelid = v.oid JOIN pg_description d ON d.objoid = i.indexrelid AND d.classoid = 'pg_class'::regclass
	UNION ALL SELECT 14, r.oid::int, format('COMMENT ON RULE %I ON %s IS %L', r.rulename, v.name, d.description)
		FROM v JOIN pg_rewrite r ON r.ev_class = v.oid AND r.rulename <> '_RETURN' JOIN pg_description d ON d.objoid = r.oid AND d.classoid = 'pg_rewrite'::regclass
	UNION ALL SELECT 15, t.oid::int, format('COMMENT ON TRIGGER %I ON %s IS %L', t.tgname, v.name, d.description)
		FROM v JOIN pg_trigger t ON t.tgrelid = v.oid JOIN pg_description d ON d.objoid = t.oid AND d.classoid = 'pg_trigger'::regclass
) s ORDER BY o, i, s`

// ruleSQL re-creates a rule on a table: its definition, whether it is
// enabled, its comment.
const ruleSQL = `SELECT s FROM (
	SELECT 1 AS o, rtrim(pg_get_ruledef(r.oid), ';') AS s FROM pg_rewrite r WHERE r.oid = $1
	UNION ALL SELECT 2, format('ALTER TABLE %s %s RULE %I', r.ev_class::regclass,
		CASE r.ev_enabled WHEN 'D' THEN 'DISABLE' WHEN 'R' THEN 'ENABLE REPLICA' ELSE 'ENABLE ALWAYS' END, r.rulename)
		FROM pg_rewrite r WHERE r.oid = $1 AND r.ev_enabled <> 'O'
	UNION ALL SELECT 3, format('COMMENT ON RULE %I ON %s IS %L', r.rulename, r.ev_class::regclass, d.description)
		FROM pg_rewrite r JOIN pg_description d ON d.objoid = r.oid AND d.classoid = 'pg_rewrite'::regclass WHERE r.oid = $1
) s ORDER BY o`

// triggerSQL re-creates a trigger on a table likewise.
const triggerSQL = `SELECT s FROM (
	SELECT 1 AS o, pg_get_triggerdef(t.oid) AS s FROM pg_trigger t WHERE t.oid = $1
	UNION ALL SELECT 2, format('ALTER TABLE %s %s TRIGGER %I', t.tgrelid::regclass,
		CASE t.tgenabled WHEN 'D' THEN 'DISABLE' WHEN 'R' THEN 'ENABLE REPLICA' ELSE 'ENABLE ALWAYS' END, t.tgname)
		FROM pg_trigger t WHERE t.oid = $1 AND t.tgenabled <> 'O'
	UNION ALL SELECT 3, format('COMMENT ON TRIGGER %I ON %s IS %L', t.tgname, t.tgrelid::regclass, d.description)
		FROM pg_trigger t JOIN pg_description d ON d.objoid = t.oid AND d.classoid = 'pg_trigger'::regclass WHERE t.oid = $1
) s ORDER BY o`

func (r *depReader) lines(ctx context.Context, sql string, oid uint32) ([]string, error) {
	rows, err := r.q.Query(ctx, sql, oid)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// statements fills the drops and creates: triggers and rules are dropped
// first, then the views, each before those it is built on; the views are
// created in the opposite order, then the rules and triggers.
func (r *depReader) statements(ctx context.Context) error {
	d := r.d
	var later []string // the rules' and triggers' creates, after the views'
	for _, o := range []struct {
		kind, name, create string
		oids               []uint32
	}{
		{"trigger", "SELECT quote_ident(tgname), tgrelid::regclass::text FROM pg_trigger WHERE oid = $1", triggerSQL, r.triggers},
		{"rule", "SELECT quote_ident(rulename), ev_class::regclass::text FROM pg_rewrite WHERE oid = $1", ruleSQL, r.rules},
	} {
		for _, oid := range o.oids {
			var name, table string
			if err := r.q.QueryRow(ctx, o.name, oid).Scan(&name, &table); err != nil {
				return err
			}
			create, err := r.lines(ctx, o.create, oid)
			if err != nil {
				return err
			}
			d.drops = append(d.drops, fmt.Sprintf("DROP %s %s ON %s", strings.ToUpper(o.kind), name, table))
			d.list = append(d.list, Dependent{Kind: o.kind, Name: name + " on " + table})
			later = append(later, create...)
		}
	}
	views, err := r.order(ctx)
	if err != nil {
		return err
	}
	for i := len(views) - 1; i >= 0; i-- {
		v := views[i]
		var mat bool
		if err := r.q.QueryRow(ctx, "SELECT relkind = 'm' FROM pg_class WHERE oid = $1", v.oid).Scan(&mat); err != nil {
			return err
		}
		kind := "view"
		if mat {
			kind = "materialized view"
		}
		d.drops = append(d.drops, fmt.Sprintf("DROP %s %s", strings.ToUpper(kind), v.name))
	}
	for _, v := range views {
		create, err := r.lines(ctx, viewSQL, v.oid)
		if err != nil {
			return err
		}
		kind := "view"
		if strings.HasPrefix(create[0], "CREATE MATERIALIZED") {
			kind = "materialized view"
		}
		d.list = append(d.list, Dependent{Kind: kind, Name: v.name})
		d.creates = append(d.creates, create...)
	}
	d.creates = append(d.creates, later...)
	return nil
}
