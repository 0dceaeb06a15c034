//go:build linux || darwin

// Package tricky holds Go that fools a regex or a brace counter.
package tricky

import (
	"fmt"
	"strings"
)

// Version is not a chunk: a const.
const Version = "func NotAFunc() {"

var table = map[string]func(int) int{
	"double": func(x int) int { return x * 2 },
}

// Store keeps things.
// It has a doc of two lines.
type Store struct {
	items map[string]string `json:"items,omitempty" note:"{"`
	mu    chan struct{}
}

type (
	// ID names a thing.
	ID int

	// Visitor visits.
	Visitor interface {
		Visit(n int) (w Visitor)
		fmt.Stringer
	}

	Alias = Store
)

// Pair is generic.
type Pair[K comparable, V any] struct {
	Key K
	Val V
}

// Get returns an item; the raw string holds a brace: `}`.
func (s *Store) Get(key string) (string, bool) {
	raw := `func (s *Store) Fake() {
	}`
	_ = raw
	v, ok := s.items[key]
	return v, ok
}

func (p Pair[K, V]) Swap() Pair[K, V] { return p }

func (p *Pair[K, V]) String() string {
	inner := func() string {
		return fmt.Sprint(p.Key) // func in a comment: func x() {}
	}
	return inner()
}

/* Walk walks,
   in a block comment. */
func Walk(v Visitor, items ...int) {
	for _, i := range items {
		if w := v.Visit(i); w != nil {
			Walk(w, i-1)
		}
	}
}

func Generic[T any](xs []T, f func(T) bool) (out []T) {
	for _, x := range xs {
		if f(x) {
			out = append(out, x)
		}
	}
	return
}

// Asm is written in assembly: a declaration, no chunk.
func Asm(x int) int

func init() {
	table["upper"] = func(int) int { return len(strings.ToUpper("}")) }
}

func (Store) Close() error {
	return nil
}

type local struct{ a, b int }

func multiline(
	a int,
	b string,
) error {
	return nil
}
