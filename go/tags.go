package mpk

import (
	"reflect"
	"sync"
)

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
