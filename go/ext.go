package mpk

import (
	"fmt"
	"reflect"
	"sync"
)

// Ext is an ext value whose type has no Go type registered with RegisterExt. Decoding an
// unregistered ext into an `any` gives an Ext; encoding an Ext writes it back unchanged.
type Ext struct {
	Type int8
	Data []byte
}

// Timestamp is a timestamp ext held exactly. Decoding into an `any` gives a time.Time; only
// seconds beyond what time.Time holds (after the year 292277026596) give a Timestamp instead.
// Encoding a Timestamp writes the timestamp ext in shortest form.
type Timestamp struct {
	Sec  int64
	Nsec uint32
}

// extCodec converts one registered Go type to and from the payload of one ext type.
type extCodec struct {
	typ    int8
	goType reflect.Type
	encode func(v reflect.Value) ([]byte, error)
	decode func(data []byte) (reflect.Value, error)
}

var extRegistry struct {
	sync.RWMutex
	byType   map[int8]*extCodec
	byGoType map[reflect.Type]*extCodec
}

// RegisterExt makes values of type T travel as ext type extType: marshal gives the payload of a
// T, unmarshal makes a T from a payload (which it must copy to keep). Decoding an ext of that type
// into an `any` or into a T calls unmarshal; encoding a T calls marshal. Register in an init
// function, before the first Marshal or Unmarshal of a type that holds a T: codecs are built once
// per type and cached. RegisterExt panics if extType is -1 (the timestamp), if extType or T is
// already registered, or if T is an interface type.
func RegisterExt[T any](extType int8, marshal func(T) ([]byte, error), unmarshal func(data []byte) (T, error)) {
	goType := reflect.TypeFor[T]()
	if extType == TimestampExt {
		panic("mpk: RegisterExt: ext type -1 is the timestamp")
	}
	if goType.Kind() == reflect.Interface {
		panic("mpk: RegisterExt: interface type " + goType.String())
	}
	c := &extCodec{
		typ:    extType,
		goType: goType,
		encode: func(v reflect.Value) ([]byte, error) { return marshal(v.Interface().(T)) },
		decode: func(data []byte) (reflect.Value, error) {
			t, err := unmarshal(data)
			return reflect.ValueOf(&t).Elem(), err
		},
	}
	extRegistry.Lock()
	defer extRegistry.Unlock()
	if extRegistry.byType == nil {
		extRegistry.byType = map[int8]*extCodec{}
		extRegistry.byGoType = map[reflect.Type]*extCodec{}
	}
	if _, dup := extRegistry.byType[extType]; dup {
		panic(fmt.Sprintf("mpk: RegisterExt: ext type %d registered twice", extType))
	}
	if _, dup := extRegistry.byGoType[goType]; dup {
		panic("mpk: RegisterExt: type " + goType.String() + " registered twice")
	}
	extRegistry.byType[extType] = c
	extRegistry.byGoType[goType] = c
	noteRegistered(goType)
}

func extByType(typ int8) *extCodec {
	extRegistry.RLock()
	defer extRegistry.RUnlock()
	return extRegistry.byType[typ]
}

func extByGoType(t reflect.Type) *extCodec {
	extRegistry.RLock()
	defer extRegistry.RUnlock()
	return extRegistry.byGoType[t]
}
