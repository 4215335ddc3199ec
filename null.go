package idgen

import (
	"database/sql/driver"
)

// ErrNull reports an SQL NULL scanned into an ID (ID.Scan), which has no
// NULL of its own: scan a nullable column into a NullID.
var ErrNull = invalid("idgen: NULL is not an ID")

// A NullID is an ID that may be SQL NULL or JSON null, as sql.NullString is
// a string that may be NULL. Valid is false for NULL.
//
// Scan keeps ID's scheme, as ID.Scan does, so start from the column's
// scheme and reuse the NullID across rows:
//
//	n := idgen.NullID{ID: scheme.Zero()}
//	err := db.QueryRow("SELECT parent_id FROM items WHERE id = $1", id).Scan(&n)
//	if n.Valid { ... use n.ID ... } else { ... NULL ... }
type NullID struct {
	ID    ID
	Valid bool // false for NULL
}

// Scan implements sql.Scanner. NULL sets Valid to false and ID to its
// scheme's zero ID (the scheme is kept for the next row); any other value is
// scanned by ID.Scan, with its errors.
func (n *NullID) Scan(src any) error {
	if src == nil {
		n.ID, n.Valid = ID{scheme: n.ID.scheme}, false
		return nil
	}
	if err := n.ID.Scan(src); err != nil {
		n.Valid = false
		return err
	}
	n.Valid = true
	return nil
}

// Value implements driver.Valuer: NULL when not Valid, else ID.Value().
func (n NullID) Value() (driver.Value, error) {
	if !n.Valid {
		return nil, nil
	}
	return n.ID.Value()
}

// MarshalJSON encodes null when not Valid, else as ID.MarshalJSON does.
func (n NullID) MarshalJSON() ([]byte, error) {
	if !n.Valid {
		return []byte("null"), nil
	}
	return n.ID.MarshalJSON()
}

// UnmarshalJSON sets Valid to false on null (keeping ID's scheme), and
// otherwise decodes as ID.UnmarshalJSON does and sets Valid.
func (n *NullID) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		n.ID, n.Valid = ID{scheme: n.ID.scheme}, false
		return nil
	}
	if err := n.ID.UnmarshalJSON(data); err != nil {
		n.Valid = false
		return err
	}
	n.Valid = true
	return nil
}
