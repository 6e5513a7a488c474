package mpkrpc

import (
	"fmt"
	"reflect"

	"mpk.dev/go/mpk"
)

// ExtRegistry maps ext types to Go types for one endpoint (mpk.RegisterExt is global; peers differ:
// Neovim numbers its handle types in nvim_get_api_info). Register before the endpoint is used.
type ExtRegistry struct {
	byType map[int8]*extEntry
	byGo   map[reflect.Type]*extEntry
}

type extEntry struct {
	typ    int8
	goType reflect.Type
	encode func(reflect.Value) ([]byte, error)
	decode func([]byte) (reflect.Value, error)
}

// RegisterExt makes values of type T travel as ext type typ on endpoints using r: encode gives
// the payload, decode makes a T from one (it must copy the bytes to keep them). It panics if typ
// or T is registered twice in r.
func RegisterExt[T any](r *ExtRegistry, typ int8, encode func(T) ([]byte, error), decode func([]byte) (T, error)) {
	t := reflect.TypeFor[T]()
	if r.byType == nil {
		r.byType, r.byGo = map[int8]*extEntry{}, map[reflect.Type]*extEntry{}
	}
	if r.byType[typ] != nil || r.byGo[t] != nil {
		panic(fmt.Sprintf("mpkrpc: RegisterExt: ext type %d or %s registered twice", typ, t))
	}
	e := &extEntry{typ: typ, goType: t,
		encode: func(v reflect.Value) ([]byte, error) { return encode(v.Interface().(T)) },
		decode: func(b []byte) (reflect.Value, error) {
			x, err := decode(b)
			return reflect.ValueOf(&x).Elem(), err
		}}
	r.byType[typ], r.byGo[t] = e, e
}

func (r *ExtRegistry) empty() bool { return r == nil || len(r.byType) == 0 }

// Buffer, Window and Tabpage are Neovim's handles: ext types whose payload is one MessagePack int.
type (
	Buffer  int64
	Window  int64
	Tabpage int64
)

// NeovimExt returns a registry with Buffer, Window and Tabpage as ext types 0, 1 and 2, the
// numbers Neovim 0.7 gives in nvim_get_api_info()[1].types.
func NeovimExt() *ExtRegistry {
	r := &ExtRegistry{}
	registerHandle[Buffer](r, 0)
	registerHandle[Window](r, 1)
	registerHandle[Tabpage](r, 2)
	return r
}

func registerHandle[T ~int64](r *ExtRegistry, typ int8) {
	RegisterExt(r, typ,
		func(h T) ([]byte, error) { return mpk.AppendInt(nil, int64(h)), nil },
		func(b []byte) (T, error) {
			n, rest, err := mpk.ReadInt(b)
			if err == nil && len(rest) != 0 {
				err = fmt.Errorf("mpkrpc: handle payload has %d bytes after its int", len(rest))
			}
			return T(n), err
		})
}

// toWire replaces values of registered types by mpk.Ext, at the top level and inside []any,
// map[string]any, map[any]any and slices of a registered type. Values in struct fields or other
// typed containers are encoded as mpk encodes them.
func (r *ExtRegistry) toWire(v any) (any, error) {
	if r.empty() || v == nil {
		return v, nil
	}
	rv := reflect.ValueOf(v)
	if e := r.byGo[rv.Type()]; e != nil {
		b, err := e.encode(rv)
		if err != nil {
			return nil, fmt.Errorf("mpkrpc: ext %d encode of %s: %w", e.typ, rv.Type(), err)
		}
		return mpk.Ext{Type: e.typ, Data: b}, nil
	}
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			w, err := r.toWire(el)
			if err != nil {
				return nil, err
			}
			out[i] = w
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, el := range x {
			w, err := r.toWire(el)
			if err != nil {
				return nil, err
			}
			out[k] = w
		}
		return out, nil
	case map[any]any:
		out := make(map[any]any, len(x))
		for k, el := range x {
			w, err := r.toWire(el)
			if err != nil {
				return nil, err
			}
			out[k] = w
		}
		return out, nil
	}
	if rv.Kind() == reflect.Slice && r.byGo[rv.Type().Elem()] != nil {
		out := make([]any, rv.Len())
		for i := range out {
			w, err := r.toWire(rv.Index(i).Interface())
			if err != nil {
				return nil, err
			}
			out[i] = w
		}
		return out, nil
	}
	return v, nil
}

// fromWire converts a value decoded into an `any`: mpk.Ext of registered types into their Go
// types, and, with binAsString, []byte into string.
func (r *ExtRegistry) fromWire(v any, binAsString bool) (any, error) {
	switch x := v.(type) {
	case []byte:
		if binAsString {
			return string(x), nil
		}
	case mpk.Ext:
		if !r.empty() {
			if e := r.byType[x.Type]; e != nil {
				out, err := e.decode(x.Data)
				if err != nil {
					return nil, fmt.Errorf("mpkrpc: ext %d decode into %s: %w", x.Type, e.goType, err)
				}
				return out.Interface(), nil
			}
		}
	case []any:
		for i, el := range x {
			w, err := r.fromWire(el, binAsString)
			if err != nil {
				return nil, err
			}
			x[i] = w
		}
	case map[string]any:
		for k, el := range x {
			w, err := r.fromWire(el, binAsString)
			if err != nil {
				return nil, err
			}
			x[k] = w
		}
	case map[any]any:
		for k, el := range x {
			w, err := r.fromWire(el, binAsString)
			if err != nil {
				return nil, err
			}
			x[k] = w
		}
	}
	return v, nil
}

// assign stores the decoded `any` value v into dst (settable), converting between the shapes
// decoding into an `any` gives and typed Go values: []any into slices and arrays, maps into maps,
// ints and floats into numeric kinds that hold them, []byte and string into each other.
func assign(dst reflect.Value, v any) error {
	if v == nil {
		dst.SetZero()
		return nil
	}
	sv := reflect.ValueOf(v)
	if sv.Type().AssignableTo(dst.Type()) {
		dst.Set(sv)
		return nil
	}
	fail := func() error { return fmt.Errorf("mpkrpc: cannot store %T in %s", v, dst.Type()) }
	switch dst.Kind() {
	case reflect.Pointer:
		p := reflect.New(dst.Type().Elem())
		if err := assign(p.Elem(), v); err != nil {
			return err
		}
		dst.Set(p)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := integer(v)
		if !ok || dst.OverflowInt(n) {
			return fail()
		}
		dst.SetInt(n)
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		var u uint64
		switch x := v.(type) {
		case int64:
			if x < 0 {
				return fail()
			}
			u = uint64(x)
		case uint64:
			u = x
		default:
			return fail()
		}
		if dst.OverflowUint(u) {
			return fail()
		}
		dst.SetUint(u)
		return nil
	case reflect.Float32, reflect.Float64:
		switch x := v.(type) {
		case float64:
			dst.SetFloat(x)
		case float32:
			dst.SetFloat(float64(x))
		case int64:
			dst.SetFloat(float64(x))
		default:
			return fail()
		}
		return nil
	case reflect.String:
		if s, ok := text(v); ok {
			dst.SetString(s)
			return nil
		}
	case reflect.Slice:
		if dst.Type().Elem().Kind() == reflect.Uint8 {
			if s, ok := text(v); ok {
				dst.SetBytes([]byte(s))
				return nil
			}
		}
		a, ok := v.([]any)
		if !ok {
			return fail()
		}
		out := reflect.MakeSlice(dst.Type(), len(a), len(a))
		for i, el := range a {
			if err := assign(out.Index(i), el); err != nil {
				return err
			}
		}
		dst.Set(out)
		return nil
	case reflect.Array:
		a, ok := v.([]any)
		if !ok || len(a) != dst.Len() {
			return fail()
		}
		for i, el := range a {
			if err := assign(dst.Index(i), el); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		out := reflect.MakeMap(dst.Type())
		put := func(k, el any) error {
			kv := reflect.New(dst.Type().Key()).Elem()
			if err := assign(kv, k); err != nil {
				return err
			}
			ev := reflect.New(dst.Type().Elem()).Elem()
			if err := assign(ev, el); err != nil {
				return err
			}
			out.SetMapIndex(kv, ev)
			return nil
		}
		switch m := v.(type) {
		case map[string]any:
			for k, el := range m {
				if err := put(k, el); err != nil {
					return err
				}
			}
		case map[any]any:
			for k, el := range m {
				if err := put(k, el); err != nil {
					return err
				}
			}
		default:
			return fail()
		}
		dst.Set(out)
		return nil
	}
	return fail()
}
