package mpk

import (
	"reflect"
	"strings"
	"sync"
)

// fieldTag is a field's parsed struct tag: `msgpack:"name,omitempty,omitzero"`.
type fieldTag struct {
	name      string
	omitEmpty bool
	omitZero  bool
	asArray   bool // struct-level (on a blank or _msgpack field): asarray / as_array
}

// parseTag splits a struct tag into its name and its options. Options are those of mpk and of
// vmihailenco/msgpack that mean the same: omitempty, omitzero, and on the struct-level field
// (`_` or vmihailenco's `_msgpack`) asarray / as_array and omitempty (every field omitempty).
// Any other option is an error naming the field, never ignored.
func parseTag(t reflect.Type, f reflect.StructField, tag string, structLevel bool) (fieldTag, error) {
	name, opts, _ := strings.Cut(tag, ",")
	ft := fieldTag{name: name}
	for opts != "" {
		var opt string
		opt, opts, _ = strings.Cut(opts, ",")
		switch {
		case opt == "omitempty":
			ft.omitEmpty = true
		case opt == "omitzero":
			ft.omitZero = true
		case (opt == "asarray" || opt == "as_array") && structLevel:
			ft.asArray = true
		case opt == "":
		default:
			return ft, &StructTagError{Type: t, Field: f.Name, Tag: tag, Option: opt}
		}
	}
	return ft, nil
}

// A StructTagError reports a struct tag option mpk does not know (or one that belongs on the
// struct-level `_` field): Marshal and Unmarshal of the type fail with it rather than ignore it.
type StructTagError struct {
	Type   reflect.Type
	Field  string
	Tag    string
	Option string
}

func (e *StructTagError) Error() string {
	return "mpk: struct " + e.Type.String() + " field " + e.Field + ": tag " + `"` + e.Tag + `"` +
		": unknown option " + `"` + e.Option + `"` + " (known: omitempty, omitzero; asarray, as_array and omitempty on the _ or _msgpack field)"
}

// isStructLevel reports whether f is the field that carries options for the whole struct: a
// blank field, or vmihailenco's `_msgpack struct{}`.
func isStructLevel(f reflect.StructField) bool {
	return f.Name == "_" || f.Name == "_msgpack"
}

// Tag names other than "msgpack" (EncodeOptions.TagName, DecodeOptions.TagName) are numbered,
// and the number goes into the codec flags, so that each gets its own cached codecs.
var tagNames struct {
	sync.Mutex
	ids   map[string]codecFlags
	names []string
}

// tagFlags returns the codec flags that select tag name.
func tagFlags(name string) codecFlags {
	if name == "" || name == "msgpack" {
		return 0
	}
	tagNames.Lock()
	defer tagNames.Unlock()
	if id, ok := tagNames.ids[name]; ok {
		return id
	}
	if tagNames.ids == nil {
		tagNames.ids = map[string]codecFlags{}
	}
	tagNames.names = append(tagNames.names, name)
	id := codecFlags(len(tagNames.names)) << tagShift
	tagNames.ids[name] = id
	return id
}

// tagName is the struct tag key the flags select.
func (f codecFlags) tagName() string {
	id := int(f >> tagShift)
	if id == 0 {
		return "msgpack"
	}
	tagNames.Lock()
	defer tagNames.Unlock()
	return tagNames.names[id-1]
}
