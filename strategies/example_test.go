package strategies_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/idgenkit/idgen/strategies"
)

// A spec is parsed once, changed with With and written back with String;
// values are escaped by one rule, so a spec inside a spec round-trips.
func ExampleSpec() {
	s := strategies.MustParse("snowflake?preset=twitter&worker=7")
	s = s.With("worker", "9").With("datacenter", "2")
	fmt.Println(s)
	w, _ := s.Get("worker")
	fmt.Println(s.Name(), w)

	pub := strategies.MustParse("public?encoding=crockford").With("inner", s.String())
	fmt.Println(pub)
	inner, _ := pub.Get("inner")
	fmt.Println(inner == s.String())
	// Output:
	// snowflake?preset=twitter&worker=9&datacenter=2
	// snowflake 9
	// public?encoding=crockford&inner=snowflake?preset=twitter%26worker=9%26datacenter=2
	// true
}

// New builds the generator a spec names; its IDs decompose into the
// layout's fields.
func ExampleNew() {
	g, err := strategies.NewText(context.Background(), "snowflake?preset=twitter&datacenter=2&worker=9")
	if err != nil {
		fmt.Println(err)
		return
	}
	id, _ := g.Next(context.Background())
	for _, f := range id.Scheme().Decompose(id) {
		if f.Name != "time" && f.Name != "sequence" {
			fmt.Printf("%s=%d (%d bits)\n", f.Name, f.Value, f.Bits)
		}
	}

	_, err = strategies.NewText(context.Background(), "snowflake?preset=twitter&worker=40")
	fmt.Println(err)
	// Output:
	// datacenter=2 (5 bits)
	// worker=9 (5 bits)
	// idgen: value out of range: worker 40 outside [0, 31] (5 bits)
}

// Options carry what a spec does not: here the worker ID a program read
// from its environment (idgen's CLI: IDGEN_WORKER_ID).
func ExampleOptions() {
	opts := strategies.Options{WorkerID: "17"}
	g, _ := opts.NewText(context.Background(), "sonyflake?machine=3")
	id, _ := g.Next(context.Background())
	for _, f := range id.Scheme().Decompose(id) {
		if f.Name == "machine" {
			fmt.Println(f.Name, f.Value)
		}
	}
	// Output:
	// machine 17
}

// A *SpecError names the key at fault, so that a program reading specs
// from a file can point at the key's line.
func ExampleSpecError() {
	_, err := strategies.NewText(context.Background(), "sonyflake?bits_sequence=40")
	if se, ok := errors.AsType[*strategies.SpecError](err); ok {
		fmt.Printf("key %s, value %s\n", se.Key, se.Value)
	}
	fmt.Println(err)
	// Output:
	// key bits_sequence, value 40
	// strategies: invalid spec: sonyflake: bits_sequence="40": want an integer in [1, 30]
}
