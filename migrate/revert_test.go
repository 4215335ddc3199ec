package migrate_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/idgenkit/idgen/migrate"
)

// treeFixture creates a self-referencing table tree (each row's parent
// is the row id/2), a child note referencing it, and a grandchild remark
// referencing note's own key.
func treeFixture(t *testing.T, conn *pgx.Conn) {
	exec(t, conn,
		"CREATE TABLE tree (id bigserial PRIMARY KEY, parent_id bigint REFERENCES tree (id) ON DELETE CASCADE, name text)",
		"INSERT INTO tree (name) SELECT 'n' || i FROM generate_series(1, 3000) i",
		"UPDATE tree SET parent_id = id / 2 WHERE id > 1",
		"CREATE TABLE note (id bigserial PRIMARY KEY, tree_id bigint NOT NULL REFERENCES tree (id))",
		"CREATE INDEX ON note (tree_id)",
		"INSERT INTO note (tree_id) SELECT id FROM tree WHERE id % 3 = 0",
		"CREATE TABLE remark (id bigserial PRIMARY KEY, note_id bigint NOT NULL REFERENCES note (id))",
		"INSERT INTO remark (note_id) SELECT id FROM note",
		"ANALYZE tree, note, remark")
}

// insertTree inserts a row under the node named parent, one referencing
// itself, a note and a remark on the note.
func insertTree(t *testing.T, conn *pgx.Conn, name, parent string) {
	exec(t, conn,
		"INSERT INTO tree (name, parent_id) SELECT '"+name+"', id FROM tree WHERE name = '"+parent+"'",
		"INSERT INTO tree (name) VALUES ('"+name+"-self')",
		"UPDATE tree SET parent_id = id WHERE name = '"+name+"-self'",
		"INSERT INTO note (tree_id) SELECT id FROM tree WHERE name = '"+name+"'",
		"INSERT INTO remark (note_id) SELECT max(id) FROM note")
}

// treeIntact checks that every parent_id and tree_id references its row,
// and the names under it are as built.
func treeIntact(t *testing.T, conn *pgx.Conn, when string) {
	t.Helper()
	for _, q := range []string{
		"SELECT count(*) FROM tree c LEFT JOIN tree p ON p.id = c.parent_id WHERE c.parent_id IS NOT NULL AND p.id IS NULL",
		"SELECT count(*) FROM note n LEFT JOIN tree p ON p.id = n.tree_id WHERE p.id IS NULL",
		"SELECT count(*) FROM remark r LEFT JOIN note n ON n.id = r.note_id WHERE n.id IS NULL",
		// n<i>'s parent is n<i/2>
		`SELECT count(*) FROM tree c JOIN tree p ON p.id = c.parent_id WHERE c.name ~ '^n[0-9]+$'
			AND p.name <> 'n' || (substr(c.name, 2)::int / 2)`,
		"SELECT count(*) FROM tree c JOIN tree p ON p.id = c.parent_id WHERE c.name LIKE '%-self' AND p.name <> c.name",
		"SELECT count(*) FROM tree c JOIN tree p ON p.id = c.parent_id WHERE c.name IN ('during', 'after') AND p.name <> 'n7'",
	} {
		if n := count(t, conn, q); n != 0 {
			t.Errorf("%s: %s = %d; want 0", when, q, n)
		}
	}
}

func columns(t *testing.T, conn *pgx.Conn, table string) string {
	t.Helper()
	var cols []string
	if err := conn.QueryRow(context.Background(), `SELECT array(SELECT attname::text FROM pg_attribute
		WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum)`, table).Scan(&cols); err != nil {
		t.Fatal(err)
	}
	return strings.Join(cols, ",")
}

// objects lists the schema's relations, functions, triggers and
// constraints besides the tables' own.
func objects(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	var objs []string
	if err := conn.QueryRow(context.Background(), `SELECT array(
		SELECT c.relname::text FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'S', 'i')
		UNION ALL SELECT p.proname::text || '()' FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace
		UNION ALL SELECT 'trigger ' || g.tgname FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
			WHERE c.relnamespace = current_schema()::regnamespace AND NOT g.tgisinternal
		UNION ALL SELECT 'constraint ' || con.conname || CASE WHEN con.convalidated THEN '' ELSE ' NOT VALID' END
			FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid WHERE c.relnamespace = current_schema()::regnamespace
		ORDER BY 1)`).Scan(&objs); err != nil {
		t.Fatal(err)
	}
	return strings.Join(objs, " ")
}

// TestSelfReferenceRevertFinish migrates a self-referencing table with a
// child and a grandchild, reverts it and discards the reverted attempt
// (Run and Finish refuse a reverted migration, naming Discard); migrates
// it again and finishes.
func TestSelfReferenceRevertFinish(t *testing.T) {
	conn, _ := schema(t)
	ctx := context.Background()
	treeFixture(t, conn)
	before := objects(t, conn)
	opt := migrate.Options{Table: "tree", To: "snowflake", Batch: 500, OnBatch: func(done, total int64) {
		if done == 1000 && total == 3000 {
			insertTree(t, conn, "during", "n7")
		}
	}}
	p, err := migrate.Run(ctx, conn, opt)
	if err != nil {
		t.Fatalf("Run(self-referencing tree) = %v", err)
	}
	if len(p.FKs) != 2 || p.FKs[1].Table != "tree" || p.FKs[1].Column != "parent_id" {
		t.Errorf("Run's plan has foreign keys %+v; want note.tree_id and tree.parent_id", p.FKs)
	}
	insertTree(t, conn, "after", "n7")
	treeIntact(t, conn, "after the swap")
	if r, err := migrate.Verify(ctx, conn, "tree"); err != nil || !r.OK() {
		t.Fatalf("Verify after the swap = %+v, %v; want ok", r, err)
	}
	if n := count(t, conn, "SELECT count(*) FROM tree WHERE id <= 100000 OR id_old IS NULL"); n != 0 {
		t.Errorf("%d rows without a new Snowflake key or without an old key", n)
	}
	var ce *migrate.ConfirmError
	if _, err := migrate.Finish(ctx, conn, "tree", false); !errors.Is(err, migrate.ErrInput) || !strings.Contains(err.Error(), "; call Finish with yes to finish") ||
		!errors.As(err, &ce) || ce.Call != "Finish" || !strings.HasSuffix(ce.What, "revert is no longer possible after it") {
		t.Errorf("Finish without yes while revert is possible = %v; want ErrInput and a *ConfirmError asking for yes", err)
	}

	took, err := migrate.Revert(ctx, conn, "tree")
	if err != nil {
		t.Fatalf("Revert = %v", err)
	}
	t.Logf("revert transaction: %v", took)
	if n := count(t, conn, "SELECT count(*) FROM tree WHERE id > 100000"); n != 0 {
		t.Errorf("%d rows keep a Snowflake key after Revert", n)
	}
	treeIntact(t, conn, "after Revert")
	insertTree(t, conn, "reverted", "n7")
	if n := count(t, conn, "SELECT count(*) FROM tree WHERE name = 'reverted' AND id < 3000"); n != 0 {
		t.Errorf("a row inserted after Revert has an old key below 3000; want the sequence's next")
	}
	if _, err := migrate.Run(ctx, conn, migrate.Options{Table: "tree"}); !errors.Is(err, migrate.ErrInput) ||
		!strings.Contains(err.Error(), "was reverted; Discard drops what it left (idgen migrate discard), or Run with StartOver (run --yes)") {
		t.Errorf("Run after Revert = %v; want ErrInput naming Discard and StartOver", err)
	}
	if _, err := migrate.Finish(ctx, conn, "tree", true); !errors.Is(err, migrate.ErrInput) ||
		!strings.Contains(err.Error(), "was reverted: finish drops the old keys of a completed migration; discard drops what the reverted one left") {
		t.Errorf("Finish after Revert = %v; want ErrInput naming discard", err)
	}
	if _, err := migrate.Revert(ctx, conn, "tree"); !errors.Is(err, migrate.ErrInput) {
		t.Errorf("Revert twice = %v; want ErrInput", err)
	}
	if err := migrate.Discard(ctx, conn, "tree"); err != nil {
		t.Fatalf("Discard after Revert = %v", err)
	}
	if got, want := columns(t, conn, "tree")+" "+columns(t, conn, "note"), "id,parent_id,name id,tree_id"; got != want {
		t.Errorf("columns after Revert and Discard = %q; want %q", got, want)
	}
	if got := objects(t, conn); got != before {
		t.Errorf("objects after Revert and Discard:\n%s\nwant as before:\n%s", got, before)
	}
	if err := migrate.Discard(ctx, conn, "tree"); !errors.Is(err, migrate.ErrInput) {
		t.Errorf("Discard twice = %v; want ErrInput (no migration recorded)", err)
	}

	// Again, to the end.
	opt.OnBatch = nil
	if _, err := migrate.Run(ctx, conn, opt); err != nil {
		t.Fatalf("Run again after Discard = %v", err)
	}
	insertTree(t, conn, "after2", "n7")
	if _, err := migrate.Finish(ctx, conn, "tree", true); err != nil {
		t.Fatalf("Finish(yes) = %v", err)
	}
	treeIntact(t, conn, "after Finish")
	if got, want := columns(t, conn, "tree")+" "+columns(t, conn, "note"), "name,id,parent_id id,tree_id"; got != want {
		t.Errorf("columns after Finish = %q; want %q", got, want)
	}
	// What is left besides the tables' own objects: the key function, the
	// default of tree.id, with its sequence; tree_id_seq went with id_old.
	if got, want := objects(t, conn), "constraint note_pkey constraint note_tree_id_fkey constraint remark_note_id_fkey constraint remark_pkey"+
		" constraint tree_parent_id_fkey constraint tree_pkey note note_id_seq note_pkey note_tree_id_idx remark remark_id_seq remark_pkey"+
		" tree tree_idgen_next() tree_idgen_seq tree_pkey"; got != want {
		t.Errorf("objects after Finish:\n%s\nwant:\n%s", got, want)
	}
	if _, err := migrate.Finish(ctx, conn, "tree", true); !errors.Is(err, migrate.ErrInput) {
		t.Errorf("Finish twice = %v; want ErrInput (no migration recorded)", err)
	}
}

// TestSelfRowInsert inserts, throughout a migration, rows that reference
// themselves in one statement, in a table whose self-referencing column
// (boss_id) sorts before the migration's own trigger names.
func TestSelfRowInsert(t *testing.T) {
	conn, _ := schema(t)
	ctx := context.Background()
	exec(t, conn,
		"CREATE TABLE staff (id bigserial PRIMARY KEY, boss_id bigint REFERENCES staff (id))",
		"INSERT INTO staff (boss_id) SELECT NULL FROM generate_series(1, 3000)",
		"UPDATE staff SET boss_id = 1 WHERE id > 1",
		"CREATE TABLE zzz (id bigserial PRIMARY KEY, staff_id bigint REFERENCES staff (id))",
		"INSERT INTO zzz (staff_id) SELECT id FROM staff")
	inserts := 0
	insert := func(done, total int64) {
		exec(t, conn, "INSERT INTO staff (id, boss_id) SELECT v, v FROM nextval('staff_id_seq') v")
		inserts++
	}
	if _, err := migrate.Run(ctx, conn, migrate.Options{Table: "staff", To: "snowflake", Batch: 500, OnBatch: insert}); err != nil {
		t.Fatalf("Run = %v", err)
	}
	insert(0, 0)
	if r, err := migrate.Verify(ctx, conn, "staff"); err != nil || !r.OK() {
		t.Fatalf("Verify = %+v, %v; want ok", r, err)
	}
	if n := count(t, conn, "SELECT count(*) FROM staff WHERE boss_id = id"); n != int64(inserts) {
		t.Errorf("%d rows reference themselves; want %d", n, inserts)
	}
}

// TestCompositeFK migrates a key that a composite foreign key (tenant,
// account_id) references through UNIQUE (tenant, id), reverts and
// finishes; a composite foreign key through another unique constraint is
// unaffected.
func TestCompositeFK(t *testing.T) {
	conn, _ := schema(t)
	ctx := context.Background()
	exec(t, conn,
		"CREATE TABLE account (id bigserial PRIMARY KEY, tenant int NOT NULL, code text NOT NULL, UNIQUE (tenant, id), UNIQUE (tenant, code))",
		"INSERT INTO account (tenant, code) SELECT i % 7, 'c' || i FROM generate_series(1, 2000) i",
		"CREATE TABLE invoice (id bigserial PRIMARY KEY, tenant int NOT NULL, account_id bigint, code text,"+
			" FOREIGN KEY (tenant, account_id) REFERENCES account (tenant, id), FOREIGN KEY (tenant, code) REFERENCES account (tenant, code))",
		"INSERT INTO invoice (tenant, account_id, code) SELECT tenant, id, code FROM account")
	fkDefs := func() string {
		var defs []string
		if err := conn.QueryRow(ctx, `SELECT array(SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint
			WHERE conrelid IN ('account'::regclass, 'invoice'::regclass) ORDER BY conname)`).Scan(&defs); err != nil {
			t.Fatal(err)
		}
		return strings.Join(defs, "; ")
	}
	want := fkDefs()
	p, err := migrate.Run(ctx, conn, migrate.Options{Table: "account", To: "snowflake", OnBatch: func(done, total int64) {
		exec(t, conn, "WITH a AS (INSERT INTO account (tenant, code) VALUES (3, 'during' || clock_timestamp()) RETURNING tenant, id, code)"+
			" INSERT INTO invoice (tenant, account_id, code) SELECT * FROM a")
	}})
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	if len(p.FKs) != 1 || p.FKs[0].Column != "account_id" || p.FKs[0].RefConstraint != "account_tenant_id_key" {
		t.Errorf("Run's foreign keys = %+v; want invoice (tenant, account_id) through account_tenant_id_key", p.FKs)
	}
	if r, err := migrate.Verify(ctx, conn, "account"); err != nil || !r.OK() {
		t.Fatalf("Verify = %+v, %v; want ok", r, err)
	}
	if got := fkDefs(); got != want {
		t.Errorf("constraints after the swap:\n%s\nwant as before:\n%s", got, want)
	}
	if n := count(t, conn, "SELECT count(*) FROM invoice i LEFT JOIN account a ON (a.tenant, a.id) = (i.tenant, i.account_id) WHERE a.id IS NULL OR a.id < 100000"); n != 0 {
		t.Errorf("%d invoices reference no account by a new key", n)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO invoice (tenant, account_id) SELECT tenant + 1, id FROM account LIMIT 1"); err == nil {
		t.Errorf("an invoice of another tenant than its account's was inserted; want a foreign key violation")
	}
	if _, err := migrate.Revert(ctx, conn, "account"); err != nil {
		t.Fatalf("Revert = %v", err)
	}
	if got := fkDefs(); got != want {
		t.Errorf("constraints after Revert:\n%s\nwant as before:\n%s", got, want)
	}
	if n := count(t, conn, "SELECT count(*) FROM invoice i LEFT JOIN account a ON (a.tenant, a.id) = (i.tenant, i.account_id) WHERE a.id IS NULL OR a.id > 100000"); n != 0 {
		t.Errorf("%d invoices reference no account by an old key after Revert", n)
	}
	if err := migrate.Discard(ctx, conn, "account"); err != nil {
		t.Fatalf("Discard after Revert = %v", err)
	}
}
