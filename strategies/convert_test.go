package strategies_test

import (
	"context"
	"errors"
	"testing"

	"github.com/idgenkit/idgen"
	"github.com/idgenkit/idgen/strategies"
)

func TestULIDUUIDSameBits(t *testing.T) {
	u := strategies.ULIDScheme().MustParse("01ARZ3NDEKTSV4RRFFQ69G5FAV")
	id, err := strategies.ULIDToUUID(u)
	if err != nil || id.String() != "01563e3a-b5d3-d676-4c61-efb99302bd5b" || id.Scheme() != strategies.UUIDScheme() {
		t.Fatalf("ULIDToUUID(%s) = %s (%s), %v; want uuid 01563e3a-b5d3-d676-4c61-efb99302bd5b", u, id, id.Scheme(), err)
	}
	back, err := strategies.UUIDToULID(id)
	if err != nil || back != u {
		t.Fatalf("UUIDToULID(%s) = %s, %v; want %s", id, back, err, u)
	}
	// strategies.Parse reads the uuid form as a UUID of version 6 ("d676").
	if p, err := strategies.Parse(id.String()); err != nil || p != id {
		t.Fatalf("Parse(%s) = %v (%s), %v; want the uuid", id, p, p.Scheme(), err)
	}
}

func TestUUIDv7ULID(t *testing.T) {
	g := strategies.NewUUIDv7()
	var prev idgen.ID
	for i := range 1000 {
		v7, _ := g.Next(context.Background())
		u, err := strategies.UUIDv7ToULID(v7)
		if err != nil {
			t.Fatalf("UUIDv7ToULID(%s) = %v", v7, err)
		}
		if !u.Time().Equal(v7.Time()) {
			t.Fatalf("UUIDv7ToULID(%s).Time() = %v; want %v", v7, u.Time(), v7.Time())
		}
		if i > 0 && prev.Compare(u) >= 0 {
			t.Fatalf("UUIDv7ToULID(%s) = %s; not above the previous %s", v7, u, prev)
		}
		prev = u
		back, err := strategies.ULIDToUUIDv7(u)
		if err != nil || back != v7 {
			t.Fatalf("ULIDToUUIDv7(%s) = %s, %v; want %s", u, back, err, v7)
		}
	}
	// A ULID becomes a valid UUIDv7 of the same millisecond.
	u := strategies.ULIDScheme().MustParse("01ARZ3NDEKTSV4RRFFQ69G5FAV")
	v7, err := strategies.ULIDToUUIDv7(u)
	if err != nil || v7.String() != "01563e3a-b5d3-7676-8c61-efb99302bd5b" || !v7.Time().Equal(u.Time()) {
		t.Fatalf("ULIDToUUIDv7(%s) = %s, %v; want 01563e3a-b5d3-7676-8c61-efb99302bd5b", u, v7, err)
	}
}

func TestConvertErrors(t *testing.T) {
	v4 := strategies.UUIDv4Scheme().MustParse("919108f7-52d1-4320-9bac-f847db4148a8")
	anyUUID := strategies.UUIDScheme().MustParse("c232ab00-9414-11ec-b3c8-9f6bdeced846")
	tests := []struct {
		name string
		id   idgen.ID
		to   *idgen.Scheme
		msg  string
	}{
		{name: "uuidv4 has no time", id: v4, to: strategies.ULIDScheme(),
			msg: "strategies: no such conversion: uuidv4 -> ulid: a UUIDv4 has no time to make a ULID of; defined: ulid -> uuid, uuid -> ulid, uuidv7 -> ulid, ulid -> uuidv7, uuidv7 -> uuid, uuidv4 -> uuid, uuid -> uuidv7, uuid -> uuidv4"},
		{name: "uuidv7 has a time", id: strategies.UUIDv7Scheme().MustParse("01923e3f-5cbb-7cfe-8e8a-89a9ec6c1744"), to: strategies.UUIDv4Scheme(),
			msg: "strategies: no such conversion: uuidv7 -> uuidv4: a UUIDv7's time has no place in a UUIDv4; defined: ulid -> uuid, uuid -> ulid, uuidv7 -> ulid, ulid -> uuidv7, uuidv7 -> uuid, uuidv4 -> uuid, uuid -> uuidv7, uuid -> uuidv4"},
		{name: "v1 is not v7", id: anyUUID, to: strategies.UUIDv7Scheme(),
			msg: "strategies: no such conversion: uuid c232ab00-9414-11ec-b3c8-9f6bdeced846 is not an RFC 9562 version 7 UUID"},
		{name: "ksuid", id: strategies.KSUIDScheme().MustParse("0ujtsYcgvSTl8PAuAdqWYSMnLOv"), to: strategies.ULIDScheme(),
			msg: "strategies: no such conversion: ksuid -> ulid: only a ULID and a UUID hold the same 128 bits; a ksuid ID is neither; defined: ulid -> uuid, uuid -> ulid, uuidv7 -> ulid, ulid -> uuidv7, uuidv7 -> uuid, uuidv4 -> uuid, uuid -> uuidv7, uuid -> uuidv4"},
		{name: "to flake128", id: v4, to: strategies.Flake128Scheme(),
			msg: "strategies: no such conversion: uuidv4 -> flake128: only a ULID and a UUID hold the same 128 bits; a flake128 ID is neither; defined: ulid -> uuid, uuid -> ulid, uuidv7 -> ulid, ulid -> uuidv7, uuidv7 -> uuid, uuidv4 -> uuid, uuid -> uuidv7, uuid -> uuidv4"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := strategies.Convert(tc.id, tc.to)
			if !errors.Is(err, strategies.ErrConvert) || err.Error() != tc.msg {
				t.Fatalf("Convert(%s, %s) = %v, %v; want %s", tc.id, tc.to, got, err, tc.msg)
			}
		})
	}
	if _, err := strategies.ULIDToUUID(v4); !errors.Is(err, strategies.ErrConvert) {
		t.Fatalf("ULIDToUUID(uuidv4) = %v; want ErrConvert", err)
	}
	if got, err := strategies.Convert(v4, strategies.UUIDScheme()); err != nil || got.String() != v4.String() {
		t.Fatalf("Convert(uuidv4, uuid) = %v, %v; want the same text", got, err)
	}
	back, err := strategies.Convert(strategies.UUIDScheme().MustParse(v4.String()), strategies.UUIDv4Scheme())
	if err != nil || back != v4 {
		t.Fatalf("Convert(uuid, uuidv4) = %v, %v; want %v", back, err, v4)
	}
}

// TestConvertExact: ConvertExact converts what Convert does when the ID
// converts back to the same bits, and refuses the rest with ErrConvert.
func TestConvertExact(t *testing.T) {
	v7 := strategies.UUIDv7Scheme().MustParse("01923e3f-5cbb-7cfe-8e8a-89a9ec6c1744")
	u, err := strategies.ConvertExact(v7, strategies.ULIDScheme())
	if err != nil {
		t.Fatal(err)
	}
	if back, err := strategies.ConvertExact(u, strategies.UUIDv7Scheme()); err != nil || back != v7 {
		t.Fatalf("ConvertExact(%s, uuidv7) = %v, %v; want %v", u, back, err, v7)
	}
	lossy := strategies.ULIDScheme().MustParse("01J8Z3YQ5V7KZ4X2M9N7P6R5T4")
	_, err = strategies.ConvertExact(lossy, strategies.UUIDv7Scheme())
	want := "strategies: no such conversion: ulid 01J8Z3YQ5V7KZ4X2M9N7P6R5T4 -> uuidv7 is lossy: 01923e3f-5cbb-7cfe-8e8a-89a9ec6c1744 does not convert back to it (a ULID becomes a UUIDv7 exactly only when it came from one)"
	if !errors.Is(err, strategies.ErrConvert) || err.Error() != want {
		t.Fatalf("ConvertExact(%s, uuidv7) = %v; want %s", lossy, err, want)
	}
	v4 := strategies.UUIDv4Scheme().MustParse("919108f7-52d1-4320-9bac-f847db4148a8")
	if _, err := strategies.ConvertExact(v4, strategies.ULIDScheme()); !errors.Is(err, strategies.ErrConvert) {
		t.Fatalf("ConvertExact(uuidv4, ulid) = %v; want ErrConvert", err)
	}
}

// TestConversionsCopy: Conversions returns a copy; changing it changes
// neither the next call nor Convert's message.
func TestConversionsCopy(t *testing.T) {
	c := strategies.Conversions()
	if len(c) != 8 || c[0] != "ulid -> uuid" {
		t.Fatalf("Conversions() = %q; want 8 pairs, ulid -> uuid first", c)
	}
	c[0] = "changed"
	if got := strategies.Conversions()[0]; got != "ulid -> uuid" {
		t.Fatalf("Conversions()[0] after changing a copy = %q; want ulid -> uuid", got)
	}
}
