package lazyre_test

import (
	"testing"

	"github.com/idgenkit/idgen/internal/lazyre"
)

func TestMustCompileOnce(t *testing.T) {
	re := lazyre.MustCompile(`^a+$`)
	first := re()
	if re() != first {
		t.Fatal("a second call compiled the expression again")
	}
	if !first.MatchString("aaa") || first.MatchString("ab") {
		t.Fatalf("%v matches the wrong strings", first)
	}
}

// An invalid expression panics at its first use, as regexp.MustCompile
// does, not when it is declared.
func TestMustCompileInvalid(t *testing.T) {
	re := lazyre.MustCompile(`(`)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for an invalid expression")
		}
	}()
	re()
}
