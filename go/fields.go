package mpk

import (
	"reflect"
	"sort"
)

// field is one struct field as Marshal and Unmarshal see it, worked out once per type.
type field struct {
	name      string
	index     []int // path through embedded structs
	typ       reflect.Type
	omitEmpty bool
	omitZero  bool
	viaPtr    bool    // the path crosses an embedded pointer, which may be nil
	tagged    bool    // the name came from a tag
	key       []byte  // the encoded map key: str head and name, ready to copy
	op        fieldOp // how to reach the field through its offset, when it is a plain kind
	offset    uintptr // from the start of the outer struct (op != opGeneric only)
}

// structFields is a struct type's field table.
type structFields struct {
	list    []field
	asArray bool           // a blank field tagged `msgpack:",asarray"` asks for an array
	byName  map[string]int // index into list, for structs with many fields
}

// typeFields analyses t: exported fields, tags, and the fields promoted from embedded structs,
// with encoding/json's rules (a shallower field wins; at one depth a tagged field wins; otherwise
// the name is dropped).
func typeFields(t reflect.Type, jsonTags bool) structFields {
	var sf structFields
	var all []field
	collectFields(t, jsonTags, nil, false, map[reflect.Type]bool{}, &all)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Name == "_" {
			if _, opts := parseTag(f.Tag.Get("msgpack")); opts.Contains("asarray") {
				sf.asArray = true
			}
		}
	}
	byName := map[string][]int{}
	for i, f := range all {
		byName[f.name] = append(byName[f.name], i)
	}
	for i := range all {
		if dominant(all, byName[all[i].name]) == &all[i] {
			sf.list = append(sf.list, all[i])
		}
	}
	sort.SliceStable(sf.list, func(i, j int) bool { return lessIndex(sf.list[i].index, sf.list[j].index) })
	for i := range sf.list {
		f := &sf.list[i]
		f.key = AppendString(nil, f.name)
		if !f.viaPtr {
			f.op = opFor(f.typ)
			f.offset = t.FieldByIndex(f.index[:1]).Offset
			inner := t.Field(f.index[0]).Type
			for _, x := range f.index[1:] {
				sf := inner.Field(x)
				f.offset += sf.Offset
				inner = sf.Type
			}
		}
	}
	if len(sf.list) > 8 {
		sf.byName = make(map[string]int, len(sf.list))
		for i, f := range sf.list {
			sf.byName[f.name] = i
		}
	}
	return sf
}

func lessIndex(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// dominant picks the field that owns a name among candidates, or nil when none does.
func dominant(all []field, cands []int) *field {
	best := -1
	tie := false
	for _, i := range cands {
		switch {
		case best < 0:
			best = i
		case len(all[i].index) < len(all[best].index):
			best, tie = i, false
		case len(all[i].index) == len(all[best].index):
			if all[i].tagged && !all[best].tagged {
				best, tie = i, false
			} else if all[i].tagged == all[best].tagged {
				tie = true
			}
		}
	}
	if best < 0 || tie {
		return nil
	}
	return &all[best]
}

func collectFields(t reflect.Type, jsonTags bool, prefix []int, viaPtr bool, seen map[reflect.Type]bool, out *[]field) {
	if seen[t] {
		return
	}
	seen[t] = true
	defer delete(seen, t)
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag, ok := sf.Tag.Lookup("msgpack")
		if !ok && jsonTags {
			tag, ok = sf.Tag.Lookup("json")
		}
		if tag == "-" {
			continue
		}
		name, opts := parseTag(tag)
		index := append(append([]int(nil), prefix...), i)
		if sf.Anonymous && name == "" {
			ft := sf.Type
			ptr := false
			if ft.Kind() == reflect.Pointer {
				ft, ptr = ft.Elem(), true
			}
			if ft.Kind() == reflect.Struct && ft != timeType {
				// Promote the embedded struct's fields, even from an unexported type, as
				// encoding/json does; an unexported pointer cannot be allocated on decode.
				if !sf.IsExported() && ptr {
					continue
				}
				collectFields(ft, jsonTags, index, viaPtr || ptr, seen, out)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		*out = append(*out, field{
			name:      name,
			index:     index,
			typ:       sf.Type,
			omitEmpty: opts.Contains("omitempty"),
			omitZero:  opts.Contains("omitzero"),
			viaPtr:    viaPtr,
			tagged:    ok && tag != "" && tagName(tag) != "",
		})
	}
}

func tagName(tag string) string {
	name, _ := parseTag(tag)
	return name
}
