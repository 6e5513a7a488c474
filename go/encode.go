package mpk

import (
	"bytes"
	"cmp"
	"errors"
	"reflect"
	"slices"
	"sync"
	"time"
	"unsafe"
)

// Marshal returns the MessagePack encoding of v, in shortest form.
//
// Go values map to MessagePack as follows:
//   - nil, a nil pointer, interface, slice or map: nil
//   - bool: bool; every int and uint kind: the shortest int
//   - float32: float 32; float64: float 64 (never narrowed)
//   - string: str; []byte and [N]byte: bin
//   - slices and arrays: array; maps: map (string, int and uint keys sorted, as encoding/json does;
//     EncodeOptions.SortMapKeys sorts every map, UnsortedMapKeys none)
//   - structs: a map from field name to value, or an array of the values in field order when the
//     struct has a blank field tagged `msgpack:",asarray"`
//   - time.Time and Timestamp: the timestamp ext (type -1), the instant only, in shortest form
//   - Ext: that ext; a type registered with RegisterExt: its ext
//   - RawMessage: its bytes as they are
//   - a type implementing Marshaler: the bytes MarshalMsgpack returns, as they are
//
// Struct fields follow encoding/json's rules: only exported fields; fields of embedded structs are
// promoted; the tag `msgpack:"name,omitempty,omitzero"` renames a field and drops it when empty
// (false, 0, "", a nil pointer or interface, an empty slice, map or array) or zero (the zero value,
// or IsZero() reporting true); the tag "-" drops it. EncodeOptions.JSONTags falls back to `json`
// tags for fields without a `msgpack` tag.
//
// Marshal returns an *UnsupportedTypeError for channels, functions and complex numbers, and a
// *MarshalerError when a Marshaler fails.
func Marshal(v any) ([]byte, error) {
	return marshal(v, 0)
}

// EncodeOptions changes how values are encoded. The zero value is the default of Marshal.
type EncodeOptions struct {
	JSONTags bool // use a field's `json` tag when it has no `msgpack` tag

	// SortMapKeys writes the pairs of every map in a fixed order, whatever its key type: maps
	// whose keys are not strings, ints or uints (which are always sorted) are sorted by the
	// bytes of their encoded keys. Without it such maps (map[any]any, float or struct keys)
	// come out in Go's random map order.
	SortMapKeys bool

	// UnsortedMapKeys writes the pairs of every map in Go's iteration order, which differs from
	// one call to the next, instead of sorting string, int and uint keys: faster on map-heavy
	// data (twitter.json as an `any` tree: about twice as fast, see go/bench), and what
	// vmihailenco and tinylib/msgp do by default, but the output is no longer byte-stable. It
	// changes only the order of pairs: decoding gives the same value. SortMapKeys wins when both
	// are set. Types with mpkgen's methods keep them (generated code writes sorted keys).
	UnsortedMapKeys bool

	// TagName is the struct tag key to read instead of "msgpack" (with JSONTags, "json" is
	// still the fallback).
	TagName string

	// IgnoreGenerated encodes types with mpkgen's methods by reflection too (the same bytes,
	// slower); for tests that compare the two.
	IgnoreGenerated bool
}

// Marshal is Marshal with these options.
func (o EncodeOptions) Marshal(v any) ([]byte, error) {
	return marshal(v, o.flags())
}

func (o EncodeOptions) flags() codecFlags {
	f := tagFlags(o.TagName)
	if o.JSONTags {
		f |= flagJSONTags
	}
	if o.SortMapKeys {
		f |= flagSortKeys
	} else if o.UnsortedMapKeys {
		f |= flagUnsorted
	}
	if o.IgnoreGenerated {
		f |= flagNoGenerated
	}
	return f
}

// codecFlags select a variant of a type's codec; each variant is cached apart.
type codecFlags uint32

const (
	flagJSONTags    codecFlags = 1 << iota // fall back to json tags
	flagSortKeys                           // EncodeOptions.SortMapKeys
	flagNoUnknown                          // DecodeOptions.DisallowUnknownFields
	flagNoGenerated                        // IgnoreGenerated
	flagUnsorted                           // EncodeOptions.UnsortedMapKeys
	tagShift        = 8                    // bits from 8 up: the tag name's number (tagFlags)
)

type codecKey struct {
	t     reflect.Type
	flags codecFlags
}

// cloneBytes copies b into a new slice. append to nil leaves the copied part uncleared, which
// make and copy would clear first: a fifth of the copy-out of a 2 MB output.
func cloneBytes(b []byte) []byte { return append([]byte(nil), b...) }

// encodeState is the scratch state of one Marshal call, pooled.
type encodeState struct {
	buf   []byte
	err   error
	flags codecFlags
	depth int // pointers and interfaces entered, to stop on cycles

	// The last top-level type and its encoder: a pooled state is per P, and a program tends to
	// marshal one type over and over, so this saves the cache lookup (a tenth of Marshal's time
	// on Product).
	lastType  reflect.Type
	lastEnc   encoderFunc
	lastDeref bool // lastType is a pointer to a struct and lastEnc that struct's encoder
	lastFlags codecFlags

	pairs []anyPair  // the sort stack of encodeStringMap
	order []keyOrder // and its order

	shapes     keyShapes    // the key lists of sorted maps (see keyShapes)
	shapesUsed uint64       // a bit per entry of shapes that holds keys
	shapesBusy uint64       // a bit per entry of shapes appendByShape is reading
	two        [2][2]string // the sorted keys of the last two maps of two pairs (see appendStringMapTwo)
	twoN       int          // how many entries of two hold keys
}

// maxEncodeDepth stops a pointer cycle before it overflows the stack.
const maxEncodeDepth = 10000

var encodeStatePool = sync.Pool{New: func() any { return &encodeState{buf: make([]byte, 0, 512)} }}

// pooledBufferMax keeps a rare huge message from pinning its buffer in the pool.
const pooledBufferMax = 64 << 10

// scratchBufferMax is the largest buffer Marshal keeps in its pooled state for the next call
// (the pool lets go of it when it goes unused through two garbage collections). A buffer that
// stays warm spares the next Marshal of a document that size the growth from 512 bytes: Marshal
// of 1000 strings of 0-4 KiB (2 MB) spent half its time clearing and copying grown buffers (CPU
// profile, go/bench cmd/prof), and ran at half the speed of shamaton, which sizes its output
// first. Larger outputs are handed over as grown, without a copy.
const scratchBufferMax = 4 << 20

func marshal(v any, flags codecFlags) ([]byte, error) {
	if anyFastPath() {
		if out, ok := marshalSmallTree(v); ok {
			return out, nil
		}
	}
	e := encodeStatePool.Get().(*encodeState)
	e.buf, e.err, e.flags, e.depth = e.buf[:0], nil, flags, 0
	e.encode(v)
	var out []byte
	err := e.err
	if err != nil {
		err = withPath(err, v, flags)
	}
	if cap(e.buf) > scratchBufferMax {
		if err == nil {
			out = e.buf
		}
		e.buf = make([]byte, 0, 512)
	} else if err == nil {
		out = cloneBytes(e.buf)
	}
	if cap(e.pairs) > 4096 {
		e.pairs, e.order = nil, nil
	}
	e.forgetShapes()
	encodeStatePool.Put(e)
	return out, err
}

func (e *encodeState) encode(v any) {
	if isAnyTree(v) {
		e.buf = e.appendAny(e.buf, v)
		return
	}
	if v == nil {
		e.buf = append(e.buf, mNil)
		return
	}
	rv := reflect.ValueOf(v)
	t := rv.Type()
	if t != e.lastType || e.flags != e.lastFlags {
		f := e.flags
		e.lastType, e.lastFlags, e.lastEnc, e.lastDeref = t, f, typeEncoder(t, f), false
		// Marshal(&v) is the common call: go straight to the struct's encoder.
		if t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct &&
			!t.Implements(marshalerType) && extByGoType(t) == nil && codecFor(t) == nil {
			e.lastEnc, e.lastDeref = typeEncoder(t.Elem(), f), true
		}
	}
	if e.lastDeref {
		if rv.IsNil() {
			e.buf = append(e.buf, mNil)
			return
		}
		rv = rv.Elem()
	}
	e.lastEnc(e, rv)
}

func (e *encodeState) setError(err error) {
	if e.err == nil {
		e.err = err
	}
}

// encoderFunc appends the encoding of v to e.buf.
type encoderFunc func(e *encodeState, v reflect.Value)

var encoderCache sync.Map // codecKey -> encoderFunc

// typeEncoder returns t's encoder, building it on first use. A placeholder that waits for the
// real encoder is stored first, so a recursive type finds it instead of recursing forever.
func typeEncoder(t reflect.Type, flags codecFlags) encoderFunc {
	key := codecKey{t, flags}
	if f, ok := encoderCache.Load(key); ok {
		return f.(encoderFunc)
	}
	var (
		wg sync.WaitGroup
		f  encoderFunc
	)
	wg.Add(1)
	fi, loaded := encoderCache.LoadOrStore(key, encoderFunc(func(e *encodeState, v reflect.Value) {
		wg.Wait()
		f(e, v)
	}))
	if loaded {
		return fi.(encoderFunc)
	}
	f = newTypeEncoder(t, flags, true)
	wg.Done()
	encoderCache.Store(key, f)
	return f
}

var (
	marshalerType = reflect.TypeFor[Marshaler]()
	rawType       = reflect.TypeFor[RawMessage]()
	timestampType = reflect.TypeFor[Timestamp]()
)

// Marshaler is implemented by types that encode themselves. MarshalMsgpack returns one whole
// MessagePack value, which is copied into the output as it is.
type Marshaler interface {
	MarshalMsgpack() ([]byte, error)
}

// selfEncoder returns the encoder of a type whose values encode themselves — a registered codec,
// mpkgen's methods, a Marshaler, a registered ext, time.Time, Timestamp, Ext, RawMessage, an
// encoding.BinaryMarshaler or TextMarshaler — or nil for a type encoded as the data it holds.
// newTypeEncoder asks it first; the error path's walk (errpath.go) asks it which values not to
// look into, so the two cannot disagree.
func selfEncoder(t reflect.Type, flags codecFlags, allowAddr bool) encoderFunc {
	if c := codecFor(t); c != nil && c.encode != nil {
		return customEncoder(c)
	}
	// Generated code writes sorted keys, which UnsortedMapKeys allows too.
	if flags&^flagUnsorted == 0 && allowAddr && isGenerated(t) {
		return generatedEncoder(newTypeEncoder(t, flags, false))
	}
	// A method on the pointer is used when the value is addressable, as in encoding/json.
	if t.Kind() != reflect.Pointer && allowAddr && reflect.PointerTo(t).Implements(marshalerType) {
		return condAddrEncoder(addrMarshalerEncoder, newTypeEncoder(t, flags, false))
	}
	if t.Implements(marshalerType) {
		return marshalerEncoder
	}
	if c := extByGoType(t); c != nil {
		return extCodecEncoder(c)
	}
	switch t {
	case timeType:
		return func(e *encodeState, v reflect.Value) {
			e.buf = AppendTime(e.buf, v.Interface().(time.Time))
		}
	case timestampType:
		return func(e *encodeState, v reflect.Value) {
			ts := v.Interface().(Timestamp)
			if ts.Nsec > maxNsec {
				e.setError(&InvalidTimestampError{Sec: ts.Sec, Nsec: ts.Nsec})
				return
			}
			e.buf = AppendTimestamp(e.buf, ts.Sec, ts.Nsec)
		}
	case extType:
		return func(e *encodeState, v reflect.Value) {
			x := v.Interface().(Ext)
			e.buf = AppendExt(e.buf, x.Type, x.Data)
		}
	case rawType:
		return func(e *encodeState, v reflect.Value) {
			if v.Len() == 0 {
				e.buf = append(e.buf, mNil)
				return
			}
			e.buf = append(e.buf, v.Bytes()...)
		}
	}
	if enc := stdEncoder(t); enc != nil {
		return enc
	}
	return nil
}

func newTypeEncoder(t reflect.Type, flags codecFlags, allowAddr bool) encoderFunc {
	if enc := selfEncoder(t, flags, allowAddr); enc != nil {
		return enc
	}
	if t == mapStringAnyType {
		// The documents of JSON-like data: the same fast path as inside an `any` (sorted pairs
		// on a shared stack) rather than reflection's MapKeys, which allocates per key.
		generic := newMapEncoder(t, flags)
		return func(e *encodeState, v reflect.Value) {
			if !v.CanInterface() || !anyFastPath() {
				generic(e, v)
				return
			}
			m := v.Interface().(map[string]any)
			if m == nil {
				e.buf = append(e.buf, mNil)
				return
			}
			e.buf = e.appendStringMap(e.buf, m)
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(e *encodeState, v reflect.Value) { e.buf = AppendBool(e.buf, v.Bool()) }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(e *encodeState, v reflect.Value) { e.buf = AppendInt(e.buf, v.Int()) }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(e *encodeState, v reflect.Value) { e.buf = AppendUint(e.buf, v.Uint()) }
	case reflect.Float32:
		return func(e *encodeState, v reflect.Value) { e.buf = AppendFloat32(e.buf, float32(v.Float())) }
	case reflect.Float64:
		return func(e *encodeState, v reflect.Value) { e.buf = AppendFloat64(e.buf, v.Float()) }
	case reflect.String:
		return func(e *encodeState, v reflect.Value) { e.buf = AppendString(e.buf, v.String()) }
	case reflect.Interface:
		return interfaceEncoder
	case reflect.Pointer:
		return pointerEncoder(t, flags)
	case reflect.Struct:
		return newStructEncoder(t, flags)
	case reflect.Map:
		return newMapEncoder(t, flags)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !implementsAny(t.Elem()) {
			return func(e *encodeState, v reflect.Value) {
				if v.IsNil() {
					e.buf = append(e.buf, mNil)
					return
				}
				e.buf = AppendBytes(e.buf, v.Bytes())
			}
		}
		return newSliceEncoder(t, flags)
	case reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && !implementsAny(t.Elem()) {
			return func(e *encodeState, v reflect.Value) {
				e.buf = AppendBytesHeader(e.buf, v.Len())
				for i := 0; i < v.Len(); i++ {
					e.buf = append(e.buf, byte(v.Index(i).Uint()))
				}
			}
		}
		return newArrayEncoder(t, flags)
	}
	return func(e *encodeState, v reflect.Value) {
		e.setError(&UnsupportedTypeError{Type: t})
		e.buf = append(e.buf, mNil)
	}
}

func condAddrEncoder(canAddr, otherwise encoderFunc) encoderFunc {
	return func(e *encodeState, v reflect.Value) {
		if v.CanAddr() {
			canAddr(e, v)
		} else {
			otherwise(e, v)
		}
	}
}

func marshalerEncoder(e *encodeState, v reflect.Value) {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		e.buf = append(e.buf, mNil)
		return
	}
	callMarshaler(e, v.Interface().(Marshaler), v.Type())
}

func addrMarshalerEncoder(e *encodeState, v reflect.Value) {
	callMarshaler(e, v.Addr().Interface().(Marshaler), v.Type())
}

func callMarshaler(e *encodeState, m Marshaler, t reflect.Type) {
	b, err := m.MarshalMsgpack()
	if err == nil {
		// The bytes must be exactly one value, or the output would be corrupt.
		var rest []byte
		if rest, err = Skip(b); err == nil && len(rest) != 0 {
			err = errors.New("MarshalMsgpack returned bytes after one value")
		}
	}
	if err != nil {
		e.setError(&MarshalerError{Type: t, Err: err})
		e.buf = append(e.buf, mNil)
		return
	}
	e.buf = append(e.buf, b...)
}

func extCodecEncoder(c *extCodec) encoderFunc {
	return func(e *encodeState, v reflect.Value) {
		data, err := c.encode(v)
		if err != nil {
			e.setError(&MarshalerError{Type: v.Type(), Err: err})
			e.buf = append(e.buf, mNil)
			return
		}
		e.buf = AppendExt(e.buf, c.typ, data)
	}
}

// interfaceEncoder encodes the dynamic value, an `any` tree by appendAny (no codec lookup per
// node).
func interfaceEncoder(e *encodeState, v reflect.Value) {
	if v.IsNil() {
		e.buf = append(e.buf, mNil)
		return
	}
	// Interface on an interface-kind Value returns the held value without copying it.
	x := v.Interface()
	if anyFastPath() {
		e.buf = e.appendAny(e.buf, x)
		return
	}
	if e.enterNested() {
		elem := v.Elem()
		typeEncoder(elem.Type(), e.flags)(e, elem)
	}
	e.depth--
}

var mapStringAnyType = reflect.TypeFor[map[string]any]()

// anyPair is one pair of a map[string]any being written.
type anyPair struct {
	k string
	v any
}

// enterNested counts one more level of pointers or interfaces; the caller decrements depth.
func (e *encodeState) enterNested() bool {
	e.depth++
	if e.depth > maxEncodeDepth {
		e.setError(errors.New("mpk: values nested more than 10000 deep (a pointer cycle?)"))
		return false
	}
	return true
}

func pointerEncoder(t reflect.Type, flags codecFlags) encoderFunc {
	var elemEnc encoderFunc
	var once sync.Once
	return func(e *encodeState, v reflect.Value) {
		if v.IsNil() {
			e.buf = append(e.buf, mNil)
			return
		}
		once.Do(func() { elemEnc = typeEncoder(t.Elem(), flags) })
		if e.enterNested() {
			elemEnc(e, v.Elem())
		}
		e.depth--
	}
}

func newSliceEncoder(t reflect.Type, flags codecFlags) encoderFunc {
	arr := newArrayEncoder(t, flags)
	return func(e *encodeState, v reflect.Value) {
		if v.IsNil() {
			e.buf = append(e.buf, mNil)
			return
		}
		arr(e, v)
	}
}

func newArrayEncoder(t reflect.Type, flags codecFlags) encoderFunc {
	var elemEnc encoderFunc
	var once sync.Once
	generic := func(e *encodeState, v reflect.Value) {
		once.Do(func() { elemEnc = typeEncoder(t.Elem(), flags) })
		n := v.Len()
		e.buf = AppendArrayHeader(e.buf, uint32(n))
		for i := 0; i < n; i++ {
			elemEnc(e, v.Index(i))
		}
	}
	op := opFor(t.Elem())
	if op == opGeneric {
		return generic
	}
	// Elements of a plain kind are read through their address, as struct fields are.
	size := t.Elem().Size()
	return func(e *encodeState, v reflect.Value) {
		var p unsafe.Pointer
		switch {
		case v.Kind() == reflect.Slice:
			p = v.UnsafePointer()
		case v.CanAddr():
			p = v.Addr().UnsafePointer()
		default:
			generic(e, v)
			return
		}
		n := v.Len()
		buf := AppendArrayHeader(e.buf, uint32(n))
		for i := 0; i < n; i++ {
			buf, _ = encodeOp(buf, op, unsafe.Add(p, uintptr(i)*size))
		}
		e.buf = buf
	}
}

// implementsAny reports whether t has its own encoding or decoding (a registered codec, a
// Marshaler or Unmarshaler, a registered ext, a binary or text marshaler or unmarshaler), so a
// shortcut by kind would be wrong.
func implementsAny(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(marshalerType) || pt.Implements(marshalerType) || pt.Implements(unmarshalerType) ||
		extByGoType(t) != nil || codecFor(t) != nil ||
		pt.Implements(binaryMarshalerType) || pt.Implements(textMarshalerType) ||
		pt.Implements(binaryUnmarshalerType) || pt.Implements(textUnmarshalerType)
}

func newMapEncoder(t reflect.Type, flags codecFlags) encoderFunc {
	var keyEnc, valEnc encoderFunc
	var once sync.Once
	kk := t.Key().Kind()
	return func(e *encodeState, v reflect.Value) {
		if v.IsNil() {
			e.buf = append(e.buf, mNil)
			return
		}
		once.Do(func() {
			keyEnc = typeEncoder(t.Key(), flags)
			valEnc = typeEncoder(t.Elem(), flags)
		})
		e.buf = AppendMapHeader(e.buf, uint32(v.Len()))
		var keys []reflect.Value
		switch {
		case flags&flagUnsorted != 0:
			for it := v.MapRange(); it.Next(); {
				keyEnc(e, it.Key())
				valEnc(e, it.Value())
			}
			return
		case kk == reflect.String:
			keys = v.MapKeys()
			slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(a.String(), b.String()) })
		case kk >= reflect.Int && kk <= reflect.Int64:
			keys = v.MapKeys()
			slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(a.Int(), b.Int()) })
		case kk >= reflect.Uint && kk <= reflect.Uintptr:
			keys = v.MapKeys()
			slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(a.Uint(), b.Uint()) })
		case flags&flagSortKeys != 0:
			e.encodeSortedPairs(v, keyEnc, valEnc)
			return
		default:
			// Unsorted, and walked pair by pair: a NaN key (a float, or in an interface) is
			// found by no lookup, so MapIndex would not give its value back.
			for it := v.MapRange(); it.Next(); {
				keyEnc(e, it.Key())
				valEnc(e, it.Value())
			}
			return
		}
		for _, k := range keys {
			keyEnc(e, k)
			valEnc(e, v.MapIndex(k))
		}
	}
}

// structEncoder writes a struct as a map of its fields (or an array, for asarray structs).
type structEncoder struct {
	fields  structFields
	encs    []encoderFunc
	header  []byte // the map or array head when no field can be left out
	dynamic bool   // some field may be left out: count them first
	once    sync.Once
	t       reflect.Type
	flags   codecFlags
}

func newStructEncoder(t reflect.Type, flags codecFlags) encoderFunc {
	se := &structEncoder{fields: typeFields(t, flags), t: t, flags: flags}
	if err := se.fields.err; err != nil {
		return func(e *encodeState, v reflect.Value) {
			e.setError(err)
			e.buf = append(e.buf, mNil)
		}
	}
	if opaqueStruct(t, se.fields) {
		return func(e *encodeState, v reflect.Value) {
			e.setError(&UnsupportedTypeError{Type: t, Reason: opaqueReason})
			e.buf = append(e.buf, mNil)
		}
	}
	n := uint32(len(se.fields.list))
	for _, f := range se.fields.list {
		if !se.fields.asArray && (f.omitEmpty || f.omitZero) || f.viaPtr {
			se.dynamic = true
		}
	}
	if se.fields.asArray {
		se.header = AppendArrayHeader(nil, n)
	} else {
		se.header = AppendMapHeader(nil, n)
	}
	return se.encode
}

func (se *structEncoder) build() {
	se.encs = make([]encoderFunc, len(se.fields.list))
	for i, f := range se.fields.list {
		se.encs[i] = typeEncoder(f.typ, se.flags)
	}
}

func (se *structEncoder) encode(e *encodeState, v reflect.Value) {
	se.once.Do(se.build)
	list := se.fields.list
	if se.dynamic {
		se.encodeDynamic(e, v)
		return
	}
	e.buf = append(e.buf, se.header...)
	var base unsafe.Pointer
	if v.CanAddr() {
		base = v.Addr().UnsafePointer()
	}
	asArray := se.fields.asArray
	for i := 0; i < len(list); i++ {
		f := &list[i]
		if base != nil && f.op != opGeneric {
			buf := e.buf
			if !asArray {
				buf = append(buf, f.key...)
			}
			// Plain fields in a row are appended to the local buf, stored back once.
			for {
				buf, _ = encodeOp(buf, f.op, unsafe.Add(base, f.offset))
				if i+1 == len(list) || list[i+1].op == opGeneric {
					break
				}
				i++
				f = &list[i]
				if !asArray {
					buf = append(buf, f.key...)
				}
			}
			e.buf = buf
			continue
		}
		if !asArray {
			e.buf = append(e.buf, f.key...)
		}
		if len(f.index) == 1 {
			se.encs[i](e, v.Field(f.index[0]))
		} else {
			se.encs[i](e, v.FieldByIndex(f.index))
		}
	}
}

// encodeDynamic writes a struct some of whose fields may be left out: omitempty and omitzero
// fields, and fields promoted through a nil embedded pointer.
func (se *structEncoder) encodeDynamic(e *encodeState, v reflect.Value) {
	list := se.fields.list
	if se.fields.asArray {
		// An array keeps every position; a field behind a nil embedded pointer is nil.
		e.buf = append(e.buf, se.header...)
		for i := range list {
			if fv, ok := fieldValue(v, &list[i]); ok {
				se.encs[i](e, fv)
			} else {
				e.buf = append(e.buf, mNil)
			}
		}
		return
	}
	count := 0
	for i := range list {
		if fv, ok := fieldValue(v, &list[i]); ok && !omitted(&list[i], fv) {
			count++
		}
	}
	e.buf = AppendMapHeader(e.buf, uint32(count))
	for i := range list {
		f := &list[i]
		fv, ok := fieldValue(v, f)
		if !ok || omitted(f, fv) {
			continue
		}
		e.buf = append(e.buf, f.key...)
		se.encs[i](e, fv)
	}
}

// fieldValue returns the field of struct v, or false when an embedded pointer on its path is nil.
func fieldValue(v reflect.Value, f *field) (reflect.Value, bool) {
	if len(f.index) == 1 {
		return v.Field(f.index[0]), true
	}
	for i, x := range f.index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

type isZeroer interface{ IsZero() bool }

var isZeroerType = reflect.TypeFor[isZeroer]()

func omitted(f *field, v reflect.Value) bool {
	if f.omitEmpty && isEmptyValue(v) {
		return true
	}
	if f.omitZero {
		if v.Type().Implements(isZeroerType) {
			if v.Kind() == reflect.Pointer && v.IsNil() {
				return true
			}
			return v.Interface().(isZeroer).IsZero()
		}
		return v.IsZero()
	}
	return false
}

func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// encodeSortedPairs writes the pairs of map v ordered by the bytes of their encoded keys
// (SortMapKeys, for keys that are not strings, ints or uints). Pairs are taken from MapRange,
// which gives a NaN key's value too.
func (e *encodeState) encodeSortedPairs(v reflect.Value, keyEnc, valEnc encoderFunc) {
	type pair struct {
		key []byte
		val reflect.Value
	}
	pairs := make([]pair, 0, v.Len())
	saved := e.buf
	for it := v.MapRange(); it.Next(); {
		e.buf = nil
		keyEnc(e, it.Key())
		pairs = append(pairs, pair{e.buf, it.Value()})
	}
	e.buf = saved
	slices.SortStableFunc(pairs, func(a, b pair) int { return bytes.Compare(a.key, b.key) })
	for _, p := range pairs {
		e.buf = append(e.buf, p.key...)
		valEnc(e, p.val)
	}
}
