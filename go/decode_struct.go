package mpk

import (
	"reflect"
	"strconv"
	"sync"
	"unsafe"
)

// structDecoder fills a struct from a map (fields matched by exact name) or an array (fields in
// order).
type structDecoder struct {
	fields structFields
	decs   []decoderFunc
	once   sync.Once
	flags  codecFlags
}

func newStructDecoder(t reflect.Type, flags codecFlags) decoderFunc {
	sd := &structDecoder{fields: typeFields(t, flags), flags: flags}
	if err := sd.fields.err; err != nil {
		return func(d *decodeState, v reflect.Value) error { return err }
	}
	if opaqueStruct(t, sd.fields) {
		return func(d *decodeState, v reflect.Value) error {
			if err := d.skip(); err != nil {
				return err
			}
			d.save(&UnsupportedTypeError{Type: t, Reason: opaqueReason})
			return nil
		}
	}
	return sd.decode
}

func (sd *structDecoder) build() {
	sd.decs = make([]decoderFunc, len(sd.fields.list))
	for i, f := range sd.fields.list {
		sd.decs[i] = typeDecoder(f.typ, sd.flags)
	}
}

func (sd *structDecoder) decode(d *decodeState, v reflect.Value) error {
	sd.once.Do(sd.build)
	h := d.off
	data := d.data
	var n int
	// A fixmap head is checked inline: its count, its depth, and its 2n bytes.
	if c := byte(0); h < len(data) {
		c = data[h]
		if c&0xf0 == 0x80 && 2*int(c&0x0f) < len(data)-h && d.depth < d.maxDepth && uint32(c&0x0f) <= d.lim.Map {
			n = int(c & 0x0f)
			d.off++
			d.open = max(d.floor+2*n, h+1+2*n) // as reader.container
			goto pairs
		}
	}
	{
		t, err := d.head()
		if err != nil {
			return err
		}
		switch t.t {
		case MapType:
			n = int(t.n)
		case ArrayType:
			return sd.decodeArray(d, v, int(t.n))
		case NilType:
			v.SetZero()
			return nil
		default:
			return d.mismatch(t, h, v.Type())
		}
	}
pairs:
	d.depth++
	floor := d.floor
	d.floor = d.open
	list := sd.fields.list
	// A struct being decoded is always addressable: Unmarshal takes a pointer.
	base := v.Addr().UnsafePointer()
	for i := 0; i < n; i++ {
		kh := d.off
		var key []byte
		if kh < len(data) && data[kh]&0xe0 == 0xa0 && !d.strict {
			kn := int(data[kh] & 0x1f)
			if end := kh + 1 + kn; end <= len(data) && uint32(kn) <= d.lim.Str {
				key = data[kh+1 : end]
				d.off = end
				goto lookup
			}
		}
		{
			t, err := d.head()
			if err != nil {
				return err
			}
			if t.t != StrType {
				// A key that is not a str names no field: skip the pair.
				if sd.flags&flagNoUnknown != 0 {
					d.unknownField(v.Type(), t.describe(), kh)
				}
				d.off = kh
				if err := d.skip(); err != nil {
					return err
				}
				if err := d.skip(); err != nil {
					return err
				}
				continue
			}
			key = data[d.off : d.off+int(t.n)]
			d.off += int(t.n)
		}
	lookup:
		idx := sd.lookup(key, i)
		if idx < 0 {
			if sd.flags&flagNoUnknown != 0 {
				d.unknownField(v.Type(), string(key), kh)
			}
			if err := d.skip(); err != nil {
				return err
			}
			continue
		}
		if err := sd.decodeField(d, v, base, idx, list); err != nil {
			return err
		}
	}
	d.depth--
	d.floor = floor
	return nil
}

func (sd *structDecoder) decodeField(d *decodeState, v reflect.Value, base unsafe.Pointer, idx int, list []field) error {
	f := &list[idx]
	prev := d.saved
	if f.op != opGeneric {
		if err := decodeOp(d, f.op, unsafe.Add(base, f.offset), f.typ); err != nil {
			return err
		}
		if d.saved != nil && d.saved != prev { // nil first: comparing two interfaces is a call
			d.noteField(f.name)
		}
		return nil
	}
	var fv reflect.Value
	if len(f.index) == 1 {
		fv = v.Field(f.index[0])
	} else {
		fv = fieldForSet(v, f.index)
	}
	if err := sd.decs[idx](d, fv); err != nil {
		return err
	}
	if d.saved != nil && d.saved != prev {
		d.noteField(f.name)
	}
	return nil
}

// noteField prefixes the saved type error's field path with name.
func (d *decodeState) noteField(name string) {
	if te, ok := d.saved.(*UnmarshalTypeError); ok {
		if te.Field == "" {
			te.Field = name
		} else {
			te.Field = name + "." + te.Field
		}
	}
}

// lookup finds the field named key; fields usually arrive in declaration order, so the i-th
// field is tried first.
func (sd *structDecoder) lookup(key []byte, i int) int {
	list := sd.fields.list
	if i < len(list) && list[i].name == string(key) {
		return i
	}
	if sd.fields.byName != nil {
		if j, ok := sd.fields.byName[string(key)]; ok {
			return j
		}
		return -1
	}
	for j := range list {
		if len(list[j].name) == len(key) && list[j].name == string(key) {
			return j
		}
	}
	return -1
}

// decodeArray fills the fields in order from an array of n elements; extra elements are skipped.
func (sd *structDecoder) decodeArray(d *decodeState, v reflect.Value, n int) error {
	list := sd.fields.list
	base := v.Addr().UnsafePointer()
	d.depth++
	floor := d.floor
	d.floor = d.open
	for i := 0; i < n; i++ {
		if i >= len(list) {
			if sd.flags&flagNoUnknown != 0 {
				d.unknownField(v.Type(), "element "+strconv.Itoa(i), d.off)
			}
			if err := d.skip(); err != nil {
				return err
			}
			continue
		}
		if err := sd.decodeField(d, v, base, i, list); err != nil {
			return err
		}
	}
	d.depth--
	d.floor = floor
	return nil
}

// fieldForSet walks a promoted field's path, allocating nil embedded pointers on the way.
func fieldForSet(v reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

// unknownField saves an *UnknownFieldError for the key at h (DisallowUnknownFields).
func (d *decodeState) unknownField(t reflect.Type, key string, h int) {
	if d.saved == nil {
		d.saved = &UnknownFieldError{Type: t, Key: key, Offset: d.base + int64(h)}
	}
}

// An UnknownFieldError reports, with DecodeOptions.DisallowUnknownFields, a map key that names
// no field of the struct being decoded (Key is the key, or "element N" for an array element past
// an asarray struct's fields).
type UnknownFieldError struct {
	Type   reflect.Type
	Key    string
	Offset int64 // the key's head byte
}

func (e *UnknownFieldError) Error() string {
	return "mpk: unknown field " + strconv.Quote(e.Key) + " for " + e.Type.String() + " at byte " + strconv.FormatInt(e.Offset, 10)
}
