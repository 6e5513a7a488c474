// Package fieldmodel holds the one description of which struct fields MessagePack sees and under
// what names: tags and their options, embedding and promotion, name ties. The reflection codecs
// (package mpk, over reflect) and the code generator (internal/gen, over go/types) both describe
// a struct through Struct and take the fields Resolve returns, so they cannot drift apart.
package fieldmodel

import (
	"reflect"
	"sort"
	"strings"
)

// Struct is a struct type as the rules need to see it.
type Struct interface {
	NumField() int
	Field(i int) Field
}

// Field is one declared field.
type Field struct {
	Name     string
	Tag      reflect.StructTag
	Exported bool
	Embedded bool
	Ptr      bool   // its type is a pointer
	Elem     Struct // the struct its type is (or points to), to promote from; nil for other types and time.Time
	ElemKey  any    // Elem's identity (a reflect.Type, a types.Type), to stop on recursive embedding
}

// Resolved is a field as encoded: its name, its path through embedded structs, its options.
type Resolved struct {
	Name      string
	Index     []int // field indexes from the outer struct down
	OmitEmpty bool
	OmitZero  bool
	ViaPtr    bool // the path crosses an embedded pointer, which may be nil
	Tagged    bool // the name came from a tag
}

// Result is a struct's field table.
type Result struct {
	Fields  []Resolved
	AsArray bool // the struct-level field asks for an array
}

// TagError is a tag option the rules do not know.
type TagError struct {
	In     any // the ElemKey (or the key given to Resolve) of the struct declaring the field
	Field  string
	Tag    string
	Option string
}

func (e *TagError) Error() string {
	return "field " + e.Field + ": tag \"" + e.Tag + "\": unknown option \"" + e.Option + "\""
}

// IsStructLevel reports whether a field named name carries options for its whole struct: a blank
// field, or vmihailenco's `_msgpack struct{}`.
func IsStructLevel(name string) bool { return name == "_" || name == "_msgpack" }

// Tag is a parsed struct tag.
type Tag struct {
	Name      string
	OmitEmpty bool
	OmitZero  bool
	AsArray   bool
}

// ParseTag splits a tag into its name and options: omitempty and omitzero, and on the struct-level
// field asarray, as_array and omitempty. Another option is an error (its text in TagError.Option).
func ParseTag(tag string, structLevel bool) (Tag, string, bool) {
	name, opts, _ := strings.Cut(tag, ",")
	t := Tag{Name: name}
	for opts != "" {
		var opt string
		opt, opts, _ = strings.Cut(opts, ",")
		switch {
		case opt == "omitempty":
			t.OmitEmpty = true
		case opt == "omitzero":
			t.OmitZero = true
		case (opt == "asarray" || opt == "as_array") && structLevel:
			t.AsArray = true
		case opt == "":
		default:
			return t, opt, false
		}
	}
	return t, "", true
}

// Options select the tag key.
type Options struct {
	TagKey   string // "msgpack" when empty
	JSONTags bool   // fall back to the json tag
}

func (o Options) lookup(f Field) (string, bool) {
	key := o.TagKey
	if key == "" {
		key = "msgpack"
	}
	tag, ok := f.Tag.Lookup(key)
	if !ok && o.JSONTags {
		tag, ok = f.Tag.Lookup("json")
	}
	return tag, ok
}

// Resolve applies the rules, which are encoding/json's: only exported fields; the fields of an
// embedded struct without a tag name are promoted (through a pointer too, unless the embedded
// type is unexported: such a pointer cannot be allocated on decode); a promoted field loses to a
// shallower one and, at the same depth, to one named by a tag, otherwise the name is dropped;
// fields come in declaration order, depth first.
func Resolve(s Struct, key any, o Options) (Result, error) {
	var res Result
	allOmitEmpty := false
	for i := 0; i < s.NumField(); i++ {
		f := s.Field(i)
		if !IsStructLevel(f.Name) {
			continue
		}
		tag, ok := o.lookup(f)
		if !ok {
			continue
		}
		t, bad, ok := ParseTag(tag, true)
		if !ok {
			return Result{}, &TagError{In: key, Field: f.Name, Tag: tag, Option: bad}
		}
		res.AsArray = res.AsArray || t.AsArray
		allOmitEmpty = allOmitEmpty || t.OmitEmpty
	}
	c := collector{o: o, allOmitEmpty: allOmitEmpty, seen: map[any]bool{}}
	var all []Resolved
	c.collect(s, key, nil, false, &all)
	if c.err != nil {
		return Result{}, c.err
	}
	byName := map[string][]int{}
	for i, f := range all {
		byName[f.Name] = append(byName[f.Name], i)
	}
	for i := range all {
		if dominant(all, byName[all[i].Name]) == i {
			res.Fields = append(res.Fields, all[i])
		}
	}
	sort.SliceStable(res.Fields, func(i, j int) bool { return less(res.Fields[i].Index, res.Fields[j].Index) })
	return res, nil
}

type collector struct {
	o            Options
	allOmitEmpty bool
	seen         map[any]bool
	err          error
}

func (c *collector) collect(s Struct, key any, prefix []int, viaPtr bool, out *[]Resolved) {
	if key != nil {
		if c.seen[key] {
			return
		}
		c.seen[key] = true
		defer delete(c.seen, key)
	}
	for i := 0; i < s.NumField(); i++ {
		f := s.Field(i)
		if IsStructLevel(f.Name) {
			continue
		}
		tag, ok := c.o.lookup(f)
		if tag == "-" {
			continue
		}
		t, bad, good := ParseTag(tag, false)
		if !good {
			if c.err == nil {
				c.err = &TagError{In: key, Field: f.Name, Tag: tag, Option: bad}
			}
			return
		}
		index := append(append([]int(nil), prefix...), i)
		if f.Embedded && t.Name == "" && f.Elem != nil {
			if !f.Exported && f.Ptr {
				continue
			}
			c.collect(f.Elem, f.ElemKey, index, viaPtr || f.Ptr, out)
			continue
		}
		if !f.Exported {
			continue
		}
		name := t.Name
		if name == "" {
			name = f.Name
		}
		*out = append(*out, Resolved{
			Name:      name,
			Index:     index,
			OmitEmpty: t.OmitEmpty || c.allOmitEmpty,
			OmitZero:  t.OmitZero,
			ViaPtr:    viaPtr,
			Tagged:    ok && t.Name != "",
		})
	}
}

// dominant picks the field that owns a name among candidates, or -1 when none does.
func dominant(all []Resolved, cands []int) int {
	best := -1
	tie := false
	for _, i := range cands {
		switch {
		case best < 0:
			best = i
		case len(all[i].Index) < len(all[best].Index):
			best, tie = i, false
		case len(all[i].Index) == len(all[best].Index):
			if all[i].Tagged && !all[best].Tagged {
				best, tie = i, false
			} else if all[i].Tagged == all[best].Tagged {
				tie = true
			}
		}
	}
	if tie {
		return -1
	}
	return best
}

func less(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}
