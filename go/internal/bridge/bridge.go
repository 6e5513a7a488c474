// Package bridge hands package genrt the few unexported pieces of package mpk it needs (reads
// that know how deep they are nested, the omitempty rules) without exporting them from mpk: mpk
// sets these in its init function, and genrt imports mpk, so they are set before genrt runs.
package bridge

var (
	SkipNested            func(b []byte, depth int) ([]byte, error)
	ReadHeaderNested      func(b []byte, depth int, array bool) (int, []byte, error)
	UnmarshalPrefixNested func(b []byte, v any, depth int, budget int64) ([]byte, int64, error)
	OmitField             func(p any, omitEmpty, omitZero bool) bool
)
