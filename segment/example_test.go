package segment_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/idgenkit/idgen/segment"
)

// memStore is a Store that keeps its rows in memory: a store of one
// process, enough to show the Store contract (Dial opens PostgreSQL, MySQL
// and Redis ones).
type memStore struct {
	mu   sync.Mutex
	tags map[string]segment.Tag
}

func (s *memStore) Init(_ context.Context, tag string, step int64, desc string) (segment.Tag, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tags[tag]; ok {
		return t, false, nil
	}
	t := segment.Tag{Name: tag, Step: step, Description: desc}
	s.tags[tag] = t
	return t, true, nil
}

func (s *memStore) Reserve(_ context.Context, tag string, step int64) (int64, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tags[tag]
	if !ok {
		return 0, 0, segment.ErrUnknownTag
	}
	if step == 0 {
		step = t.Step
	}
	t.MaxID += step
	s.tags[tag] = t
	return t.MaxID, step, nil
}

func (s *memStore) Close() error   { return nil }
func (s *memStore) String() string { return "memory" }

// An Allocator hands out a segment from memory; Stats tells what it holds.
func ExampleNew() {
	ctx := context.Background()
	store := &memStore{tags: map[string]segment.Tag{}}
	if _, _, err := store.Init(ctx, "orders", 100, "order IDs"); err != nil {
		panic(err)
	}
	a, err := segment.New(ctx, segment.Config{Store: store, Tag: "orders", FixedPrefetch: true})
	if err != nil {
		panic(err)
	}
	defer a.Close()
	for range 3 {
		id, _ := a.Next(ctx)
		fmt.Println(id)
	}
	st := a.Stats()
	fmt.Println(st.Segments, st.Step, st.Remaining)
	// Output:
	// 1
	// 2
	// 3
	// 1 100 97
}
