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
	err     error          // a *StructTagError: the type cannot be encoded or decoded
}

// typeFields analyses t: exported fields, tags, and the fields promoted from embedded structs,
// with encoding/json's rules (a shallower field wins; at one depth a tagged field wins; otherwise
// the name is dropped). flags select the tag key (TagName) and the json fallback.
func typeFields(t reflect.Type, flags codecFlags) structFields {
	var sf structFields
	var all []field
	c := fieldCollector{tagKey: flags.tagName(), jsonTags: flags&flagJSONTags != 0, seen: map[reflect.Type]bool{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if isStructLevel(f) {
			tag, ok := c.lookup(f)
			if !ok {
				continue
			}
			ft, err := parseTag(t, f, tag, true)
			if err != nil {
				return structFields{err: err}
			}
			sf.asArray = sf.asArray || ft.asArray
			c.allOmitEmpty = c.allOmitEmpty || ft.omitEmpty
		}
	}
	c.collect(t, nil, false, &all)
	if c.err != nil {
		return structFields{err: c.err}
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

// fieldCollector walks a struct and the structs it embeds.
type fieldCollector struct {
	tagKey       string
	jsonTags     bool
	allOmitEmpty bool // the struct-level field has omitempty (vmihailenco's spelling)
	seen         map[reflect.Type]bool
	err          error
}

// lookup returns f's tag under the tag key, or its json tag with JSONTags.
func (c *fieldCollector) lookup(f reflect.StructField) (string, bool) {
	tag, ok := f.Tag.Lookup(c.tagKey)
	if !ok && c.jsonTags {
		tag, ok = f.Tag.Lookup("json")
	}
	return tag, ok
}

func (c *fieldCollector) collect(t reflect.Type, prefix []int, viaPtr bool, out *[]field) {
	if c.seen[t] {
		return
	}
	c.seen[t] = true
	defer delete(c.seen, t)
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if isStructLevel(sf) {
			continue
		}
		tag, ok := c.lookup(sf)
		if tag == "-" {
			continue
		}
		ft, err := parseTag(t, sf, tag, false)
		if err != nil {
			if c.err == nil {
				c.err = err
			}
			return
		}
		name := ft.name
		index := append(append([]int(nil), prefix...), i)
		if sf.Anonymous && name == "" {
			ftyp := sf.Type
			ptr := false
			if ftyp.Kind() == reflect.Pointer {
				ftyp, ptr = ftyp.Elem(), true
			}
			if ftyp.Kind() == reflect.Struct && ftyp != timeType {
				// Promote the embedded struct's fields, even from an unexported type, as
				// encoding/json does; an unexported pointer cannot be allocated on decode.
				if !sf.IsExported() && ptr {
					continue
				}
				c.collect(ftyp, index, viaPtr || ptr, out)
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
			omitEmpty: ft.omitEmpty || c.allOmitEmpty,
			omitZero:  ft.omitZero,
			viaPtr:    viaPtr,
			tagged:    ok && name != "" && ft.name != "",
		})
	}
}
