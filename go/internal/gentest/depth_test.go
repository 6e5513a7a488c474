package gentest

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"mpk.dev/go/mpk"
)

// nesting builds a message whose containers form one chain, each inside the one before, and
// records the offset of every container head: by spec/README.md the 1025th of them is where
// depth_limit falls (a top-level container is at depth 1).
type nesting struct {
	b     []byte
	heads []int
}

// head appends a container head (its first byte is the head byte) that nests inside the previous.
func (m *nesting) head(h ...byte) *nesting {
	m.heads = append(m.heads, len(m.b))
	m.b = append(m.b, h...)
	return m
}

// raw appends bytes that open no container of the chain (keys, scalars).
func (m *nesting) raw(b ...byte) *nesting {
	m.b = append(m.b, b...)
	return m
}

func (m *nesting) key(s string) *nesting {
	return m.raw(append([]byte{0xa0 | byte(len(s))}, s...)...)
}

// arrays appends n one-element arrays, each inside the one before, and a nil inside the last.
func (m *nesting) arrays(n int) *nesting {
	for ; n > 0; n-- {
		m.head(0x91)
	}
	return m.raw(0xc0)
}

// float64s appends n float 64 zeros.
func (m *nesting) float64s(n int) *nesting {
	for ; n > 0; n-- {
		m.raw(0xcb, 0, 0, 0, 0, 0, 0, 0, 0)
	}
	return m
}

// wantDepthLimit is the offset where depth_limit must fall, or -1 when the chain fits.
func (m *nesting) wantDepthLimit() int {
	if len(m.heads) > mpk.DefaultDepthLimit {
		return m.heads[mpk.DefaultDepthLimit]
	}
	return -1
}

// generated is a type with a generated UnmarshalMsg.
type generated interface {
	UnmarshalMsg([]byte) ([]byte, error)
}

// TestGeneratedDepthLimit nests values as deep as the depth limit, one past it, and one short of
// it, through every way generated code reads a value: a skipped unknown field, a skipped surplus
// element of an asarray struct, a field decoded by reflection (any, [4]byte), nested generated
// structs (through a field, a pointer, a slice and a map), and the struct heads themselves.
// UnmarshalMsg must report depth_limit where spec/README.md puts it and where Unmarshal does.
func TestGeneratedDepthLimit(t *testing.T) {
	type build func(m *nesting, n int) // n: how many more containers the message nests
	cases := []struct {
		name  string
		fresh func() generated
		base  int // containers the message opens besides the n of build
		build build
	}{
		{"unknown field", func() generated { return new(Product) }, 1, func(m *nesting, n int) {
			m.head(0x81).key("0R0\x93").arrays(n)
		}},
		{"surplus asarray element", func() generated { return new(Point) }, 1, func(m *nesting, n int) {
			m.head(0x93).float64s(2).arrays(n)
		}},
		{"any field", func() generated { return new(Mixed) }, 1, func(m *nesting, n int) {
			m.head(0x81).key("Any").arrays(n)
		}},
		{"[4]byte field by reflection", func() generated { return new(Mixed) }, 1, func(m *nesting, n int) {
			m.head(0x81).key("Fixed").arrays(n)
		}},
		{"unknown field of a struct in a slice", func() generated { return new(Mixed) }, 3, func(m *nesting, n int) {
			m.head(0x81).key("Items").head(0x91).head(0x81).key("x").arrays(n)
		}},
		{"unknown field of a struct behind a pointer", func() generated { return new(Mixed) }, 2, func(m *nesting, n int) {
			m.head(0x81).key("Ptr").head(0x81).key("x").arrays(n)
		}},
		{"surplus element of a struct in a map", func() generated { return new(Mixed) }, 3, func(m *nesting, n int) {
			m.head(0x81).key("Named").head(0x81).key("k").head(0x93).float64s(2).arrays(n)
		}},
		{"struct heads through a pointer", func() generated { return new(Tree) }, 0, func(m *nesting, n int) {
			for i := 1; i < n; i++ {
				m.head(0x81).key("next")
			}
			m.head(0x80)
		}},
		{"struct heads through a slice", func() generated { return new(Tree) }, 0, func(m *nesting, n int) {
			// A map and an array a level; an odd n ends on a map, an even n on an array.
			for i := 2; i < n; i += 2 {
				m.head(0x81).key("kids").head(0x91)
			}
			if n%2 == 0 {
				m.head(0x81).key("kids").head(0x90)
			} else {
				m.head(0x80)
			}
		}},
		{"struct heads through a map", func() generated { return new(Tree) }, 0, func(m *nesting, n int) {
			for i := 2; i < n; i += 2 {
				m.head(0x81).key("by_name").head(0x81).key("k")
			}
			if n%2 == 0 {
				m.head(0x81).key("by_name").head(0x80)
			} else {
				m.head(0x80)
			}
		}},
		{"asarray struct as the deepest head", func() generated { return new(Tree) }, 1, func(m *nesting, n int) {
			for i := 1; i < n; i++ {
				m.head(0x81).key("next")
			}
			m.head(0x81).key("leaf").head(0x92).float64s(2)
		}},
		{"unknown field deep in a tree", func() generated { return new(Tree) }, 601, func(m *nesting, n int) {
			for i := 0; i < 300; i++ {
				m.head(0x81).key("kids").head(0x91)
			}
			m.head(0x81).key("x").arrays(n)
		}},
	}
	for _, c := range cases {
		for _, total := range []int{mpk.DefaultDepthLimit - 1, mpk.DefaultDepthLimit, mpk.DefaultDepthLimit + 1, mpk.DefaultDepthLimit + 2} {
			t.Run(fmt.Sprintf("%s/%d deep", c.name, total), func(t *testing.T) {
				m := new(nesting)
				c.build(m, total-c.base)
				if len(m.heads) != total {
					t.Fatalf("the message nests %d containers, want %d", len(m.heads), total)
				}
				want := m.wantDepthLimit()
				viaGen, viaReflect := c.fresh(), c.fresh()
				rest, genErr := viaGen.UnmarshalMsg(m.b)
				refErr := reflectDecode.Unmarshal(m.b, viaReflect)
				if want < 0 {
					// An array into [4]byte is a type error on both sides, at the same offset.
					var gt, rt *mpk.UnmarshalTypeError
					if errors.As(genErr, &gt) && errors.As(refErr, &rt) && gt.Offset == rt.Offset {
						return
					}
					if genErr != nil || refErr != nil || len(rest) != 0 {
						t.Fatalf("generated: %v (%d bytes left), reflection: %v", genErr, len(rest), refErr)
					}
					if !reflect.DeepEqual(viaGen, viaReflect) {
						t.Fatalf("generated %+v, reflection %+v", viaGen, viaReflect)
					}
					return
				}
				wantErr := mpk.DecodeError{Kind: mpk.DepthLimit, Offset: int64(want)}
				var g, r *mpk.DecodeError
				if !errors.As(genErr, &g) || *g != wantErr {
					t.Errorf("generated: %v, want %v", genErr, &wantErr)
				}
				if !errors.As(refErr, &r) || *r != wantErr {
					t.Errorf("reflection: %v, want %v", refErr, &wantErr)
				}
			})
		}
	}
}
