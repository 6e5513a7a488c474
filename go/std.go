package mpk

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"sync"
)

// How a type's own encoding is chosen, first match wins (the README's "Precedence" table):
//
//  1. a codec registered for the type with RegisterCodec;
//  2. Marshaler / Unmarshaler (MarshalMsgpack, UnmarshalMsgpack);
//  3. a type registered with RegisterExt;
//  4. time.Time, Timestamp, Ext, RawMessage;
//  5. encoding.BinaryMarshaler / BinaryUnmarshaler, as a bin;
//  6. encoding.TextMarshaler / TextUnmarshaler, as a str;
//  7. the type's kind (struct fields, slices, maps, ...).
//
// Binary comes before text as in vmihailenco/msgpack, so netip.Addr is written as the same
// 4 or 16 byte bin (c4 04 0a 00 00 01 for 10.0.0.1). Decoding takes either a bin or a str for
// a type with only one of the two methods, and picks by the input for a type with both.

var (
	binaryMarshalerType   = reflect.TypeFor[encoding.BinaryMarshaler]()
	binaryUnmarshalerType = reflect.TypeFor[encoding.BinaryUnmarshaler]()
	textMarshalerType     = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType   = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// customCodec is a codec registered with RegisterCodec.
type customCodec struct {
	encode func(b []byte, v reflect.Value) ([]byte, error)
	decode func(data []byte) (reflect.Value, error)
}

var codecRegistry struct {
	sync.RWMutex
	byType map[reflect.Type]*customCodec
}

// RegisterCodec makes values of type T encode with marshal and decode with unmarshal, for types
// you do not own (or to override a type's own methods): marshal appends exactly one MessagePack
// value to b (use the Append functions) and returns it; unmarshal gets exactly one whole,
// well-formed value (it must copy what it keeps) and returns the T. A registered codec comes
// before every other way a type can encode itself. Either function may be nil: that direction
// then works as if nothing were registered. Register in an init function, before the first
// Marshal or Unmarshal of a type that holds a T (codecs are cached per type); RegisterCodec
// panics if T is already registered or is an interface type.
func RegisterCodec[T any](marshal func(b []byte, v T) ([]byte, error), unmarshal func(data []byte) (T, error)) {
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Interface {
		panic("mpk: RegisterCodec: interface type " + t.String())
	}
	c := &customCodec{}
	if marshal != nil {
		c.encode = func(b []byte, v reflect.Value) ([]byte, error) { return marshal(b, v.Interface().(T)) }
	}
	if unmarshal != nil {
		c.decode = func(data []byte) (reflect.Value, error) {
			v, err := unmarshal(data)
			return reflect.ValueOf(&v).Elem(), err
		}
	}
	codecRegistry.Lock()
	defer codecRegistry.Unlock()
	if codecRegistry.byType == nil {
		codecRegistry.byType = map[reflect.Type]*customCodec{}
	}
	if _, dup := codecRegistry.byType[t]; dup {
		panic("mpk: RegisterCodec: type " + t.String() + " registered twice")
	}
	codecRegistry.byType[t] = c
	if marshal != nil {
		noteRegistered(t)
	}
}

func codecFor(t reflect.Type) *customCodec {
	codecRegistry.RLock()
	defer codecRegistry.RUnlock()
	return codecRegistry.byType[t]
}

func customEncoder(c *customCodec) encoderFunc {
	return func(e *encodeState, v reflect.Value) {
		start := len(e.buf)
		out, err := c.encode(e.buf, v)
		if err == nil {
			// The appended bytes must be exactly one value, or the output would be corrupt.
			if rest, serr := Skip(out[start:]); serr != nil {
				err = serr
			} else if len(rest) != 0 {
				err = errors.New("the codec appended bytes after one value")
			}
		}
		if err != nil {
			e.setError(&MarshalerError{Type: v.Type(), Err: err})
			e.buf = append(e.buf[:start], mNil)
			return
		}
		e.buf = out
	}
}

func customDecoder(c *customCodec) decoderFunc {
	return func(d *decodeState, v reflect.Value) error {
		h := d.off
		if err := d.skip(); err != nil {
			return err
		}
		x, err := c.decode(d.data[h:d.off])
		if err != nil {
			d.save(&UnmarshalerError{Type: v.Type(), Offset: d.base + int64(h), Err: err})
			return nil
		}
		v.Set(x)
		return nil
	}
}

// An UnmarshalerError wraps an error returned by a type's own decoding method
// (UnmarshalBinary, UnmarshalText) or by a codec registered with RegisterCodec.
type UnmarshalerError struct {
	Type   reflect.Type
	Offset int64 // the value's head byte
	Err    error
}

func (e *UnmarshalerError) Error() string {
	return fmt.Sprintf("mpk: error decoding %s at byte %d: %v", e.Type, e.Offset, e.Err)
}

// Unwrap returns the underlying error.
func (e *UnmarshalerError) Unwrap() error { return e.Err }

// stdEncoder returns the encoder of a type implementing encoding.BinaryMarshaler or
// TextMarshaler, or nil. A method on the pointer is used on a copy when the value is not
// addressable, so that a big.Int held by value is not written as its (unexported) fields.
func stdEncoder(t reflect.Type) encoderFunc {
	if t.Kind() == reflect.Pointer {
		// The pointer's encoder writes nil or its target, whose own encoder applies the rules
		// (so a *time.Time is a timestamp, like a time.Time).
		return nil
	}
	var asBin bool
	var onPtr bool
	switch {
	case t.Implements(binaryMarshalerType):
		asBin = true
	case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(binaryMarshalerType):
		asBin, onPtr = true, true
	case t.Implements(textMarshalerType):
	case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(textMarshalerType):
		onPtr = true
	default:
		return nil
	}
	return func(e *encodeState, v reflect.Value) {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			e.buf = append(e.buf, mNil)
			return
		}
		var x any
		if onPtr {
			if !v.CanAddr() {
				c := reflect.New(t).Elem()
				c.Set(v)
				v = c
			}
			x = v.Addr().Interface()
		} else {
			x = v.Interface()
		}
		var b []byte
		var err error
		if asBin {
			b, err = x.(encoding.BinaryMarshaler).MarshalBinary()
		} else {
			b, err = x.(encoding.TextMarshaler).MarshalText()
		}
		if err != nil {
			e.setError(&MarshalerError{Type: t, Err: err})
			e.buf = append(e.buf, mNil)
			return
		}
		if asBin {
			e.buf = AppendBytes(e.buf, b)
		} else {
			e.buf = AppendStringBytes(e.buf, b)
		}
	}
}

// stdDecoder returns the decoder of a type whose pointer implements encoding.BinaryUnmarshaler
// or TextUnmarshaler, or nil: a bin or a str is handed to the method (UnmarshalBinary for a bin
// when it has both, UnmarshalText for a str), nil gives the zero value.
func stdDecoder(t reflect.Type) decoderFunc {
	pt := reflect.PointerTo(t)
	hasBin, hasText := pt.Implements(binaryUnmarshalerType), pt.Implements(textUnmarshalerType)
	if !hasBin && !hasText {
		return nil
	}
	return func(d *decodeState, v reflect.Value) error {
		h := d.off
		tk, err := d.head()
		if err != nil {
			return err
		}
		switch tk.t {
		case NilType:
			v.SetZero()
			return nil
		case BinType, StrType:
		default:
			return d.mismatch(tk, h, v.Type())
		}
		data := d.data[d.off : d.off+int(tk.n)]
		d.off += int(tk.n)
		p := v.Addr().Interface()
		if hasBin && (tk.t == BinType || !hasText) {
			err = p.(encoding.BinaryUnmarshaler).UnmarshalBinary(data)
		} else {
			err = p.(encoding.TextUnmarshaler).UnmarshalText(data)
		}
		if err != nil {
			d.save(&UnmarshalerError{Type: t, Offset: d.base + int64(h), Err: err})
		}
		return nil
	}
}

// opaqueStruct reports whether t is a struct that has fields but none that Marshal could write:
// only unexported ones, with nothing promoted from embedded structs and none dropped by a "-"
// tag. Such a value (a sync.Mutex, a type from another package whose state is private) would
// otherwise go out as an empty map and come back as its zero value, silently; Marshal and
// Unmarshal report an *UnsupportedTypeError instead. struct{} and structs whose fields are all
// tagged "-" are written as empty maps.
func opaqueStruct(t reflect.Type, fields structFields) bool {
	if t.Kind() != reflect.Struct || t.NumField() == 0 || len(fields.list) != 0 || fields.asArray {
		return false
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.IsExported() || f.Tag.Get("msgpack") == "-" || f.Name == "_" && f.Tag.Get("msgpack") != "" {
			return false
		}
	}
	return true
}
