package mpk

import (
	"reflect"

	"mpk.dev/go/mpk/internal/fieldmodel"
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

// typeFields analyses t with the rules of internal/fieldmodel (shared with mpkgen). flags
// select the tag key (TagName) and the json fallback.
func typeFields(t reflect.Type, flags codecFlags) structFields {
	var sf structFields
	res, err := fieldmodel.Resolve(reflectStruct{t}, t, fieldmodel.Options{TagKey: flags.tagName(), JSONTags: flags&flagJSONTags != 0})
	if err != nil {
		te := err.(*fieldmodel.TagError)
		return structFields{err: &StructTagError{Type: te.In.(reflect.Type), Field: te.Field, Tag: te.Tag, Option: te.Option}}
	}
	sf.asArray = res.AsArray
	for _, r := range res.Fields {
		ft := t.FieldByIndex(r.Index[:1])
		inner := ft.Type
		for _, x := range r.Index[1:] {
			if inner.Kind() == reflect.Pointer {
				inner = inner.Elem()
			}
			inner = inner.Field(x).Type
		}
		sf.list = append(sf.list, field{
			name:      r.Name,
			index:     r.Index,
			typ:       inner,
			omitEmpty: r.OmitEmpty,
			omitZero:  r.OmitZero,
			viaPtr:    r.ViaPtr,
			tagged:    r.Tagged,
		})
	}
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

// reflectStruct describes a struct type to fieldmodel.
type reflectStruct struct{ t reflect.Type }

func (s reflectStruct) NumField() int { return s.t.NumField() }

func (s reflectStruct) Field(i int) fieldmodel.Field {
	sf := s.t.Field(i)
	f := fieldmodel.Field{Name: sf.Name, Tag: sf.Tag, Exported: sf.IsExported(), Embedded: sf.Anonymous}
	ft := sf.Type
	if ft.Kind() == reflect.Pointer {
		ft, f.Ptr = ft.Elem(), true
	}
	if ft.Kind() == reflect.Struct && ft != timeType {
		f.Elem, f.ElemKey = reflectStruct{ft}, ft
	}
	return f
}
