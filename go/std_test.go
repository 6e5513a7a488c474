package mpk

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"net/netip"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStandardTypesBytes pins the encoding of the standard library types the issue names.
func TestStandardTypesBytes(t *testing.T) {
	u, _ := url.Parse("https://x.io/a?b=1")
	cases := []struct {
		v    any
		want string
	}{
		{netip.MustParseAddr("10.0.0.1"), "c4040a000001"}, // MarshalBinary, as vmihailenco writes it
		{big.NewInt(5), "a135"},                           // MarshalText
		{*big.NewInt(-7), "a22d37"},                       // a big.Int held by value: the pointer's method on a copy
		{big.NewFloat(1.5), "a3312e35"},
		{u, "c412" + hex.EncodeToString([]byte("https://x.io/a?b=1"))}, // MarshalBinary
		{3 * time.Second, "ceb2d05e00"},                                // an int64 of nanoseconds
		{json.Number("12.5"), "a431322e35"},
		{json.RawMessage(`{"a":1}`), "c407" + hex.EncodeToString([]byte(`{"a":1}`))},
	}
	for _, c := range cases {
		b, err := Marshal(c.v)
		if err != nil || hex.EncodeToString(b) != c.want {
			t.Errorf("Marshal(%T %v) = %x, %v; want %s", c.v, c.v, b, err, c.want)
		}
	}
}

type stdHolder struct {
	Addr    netip.Addr
	Prefix  netip.Prefix
	PAddr   *netip.Addr
	Int     big.Int
	PInt    *big.Int
	Float   *big.Float
	URL     url.URL
	PURL    *url.URL
	Dur     time.Duration
	Num     json.Number
	Raw     json.RawMessage
	Addrs   []netip.Addr
	ByAddr  map[netip.Addr]int
	Missing *big.Int
}

// TestStandardTypesRoundTrip encodes every type of the issue inside a struct, by pointer and by
// value, in slices and as map keys, and decodes it back equal.
func TestStandardTypesRoundTrip(t *testing.T) {
	a := netip.MustParseAddr("2001:db8::1")
	u, _ := url.Parse("https://user@example.com:8080/p/q?x=1#frag")
	f, _, _ := big.ParseFloat("3.14159265358979323846264338327950288", 10, 200, big.ToNearestEven)
	in := stdHolder{
		Addr:   netip.MustParseAddr("10.0.0.1"),
		Prefix: netip.MustParsePrefix("192.168.0.0/16"),
		PAddr:  &a,
		PInt:   new(big.Int).Lsh(big.NewInt(1), 200),
		Float:  f,
		URL:    *u,
		PURL:   u,
		Dur:    90 * time.Minute,
		Num:    "6.02e23",
		Raw:    json.RawMessage(`[1,2]`),
		Addrs:  []netip.Addr{a, netip.IPv6Unspecified()},
		ByAddr: map[netip.Addr]int{a: 1},
	}
	in.Int.SetString("-123456789012345678901234567890", 10)
	b, err := Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	var out stdHolder
	if err := Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Addr != in.Addr || out.Prefix != in.Prefix || *out.PAddr != a || out.Int.Cmp(&in.Int) != 0 ||
		out.PInt.Cmp(in.PInt) != 0 || out.Float.String() != in.Float.String() ||
		out.URL.String() != u.String() || out.PURL.String() != u.String() || out.Dur != in.Dur ||
		out.Num != in.Num || string(out.Raw) != string(in.Raw) || !reflect.DeepEqual(out.Addrs, in.Addrs) ||
		out.ByAddr[a] != 1 || out.Missing != nil {
		t.Fatalf("round trip:\n in %+v\nout %+v", in, out)
	}
	// Into any, the standard types come back as what they were written as.
	in.ByAddr = nil // a bin key has no Go map key in an any
	b, _ = Marshal(&in)
	var x any
	if err := Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	m := x.(map[string]any)
	if !reflect.DeepEqual(m["Addr"], []byte{10, 0, 0, 1}) || m["PInt"] != in.PInt.String() {
		t.Fatalf("into any: Addr %v, PInt %v", m["Addr"], m["PInt"])
	}
}

// textOnly has only text methods; both take a bin or a str.
type textOnly struct{ s string }

func (x textOnly) MarshalText() ([]byte, error) { return []byte("t:" + x.s), nil }
func (x *textOnly) UnmarshalText(b []byte) error {
	s, ok := strings.CutPrefix(string(b), "t:")
	if !ok {
		return errors.New("no t: prefix")
	}
	x.s = s
	return nil
}

// both has binary, text and mpk's own methods: mpk's own win.
type both struct{ n int }

func (x both) MarshalBinary() ([]byte, error)  { return []byte{byte(x.n)}, nil }
func (x *both) UnmarshalBinary(b []byte) error { x.n = int(b[0]); return nil }
func (x both) MarshalText() ([]byte, error)    { return []byte(strconv.Itoa(x.n)), nil }
func (x *both) UnmarshalText(b []byte) error {
	n, err := strconv.Atoi(string(b))
	x.n = n
	return err
}

type own struct{ both }

func (x own) MarshalMsgpack() ([]byte, error) { return AppendInt(nil, int64(x.n)), nil }
func (x *own) UnmarshalMsgpack(b []byte) error {
	n, _, err := ReadInt(b)
	x.n = int(n)
	return err
}

// TestStandardInterfacePrecedence: Marshaler before BinaryMarshaler before TextMarshaler on
// encode; on decode a type with both binary and text methods picks by the input's family.
func TestStandardInterfacePrecedence(t *testing.T) {
	check := func(v any, want string) {
		t.Helper()
		b, err := Marshal(v)
		if err != nil || hex.EncodeToString(b) != want {
			t.Errorf("Marshal(%T) = %x, %v; want %s", v, b, err, want)
		}
	}
	check(textOnly{"a"}, "a3743a61")
	check(both{7}, "c40107")
	check(own{both{7}}, "07")
	var b both
	if err := Unmarshal([]byte{0xc4, 0x01, 0x09}, &b); err != nil || b.n != 9 {
		t.Errorf("bin into both: %v %v", b, err)
	}
	if err := Unmarshal([]byte{0xa2, '4', '2'}, &b); err != nil || b.n != 42 {
		t.Errorf("str into both: %v %v", b, err)
	}
	var to textOnly
	if err := Unmarshal([]byte{0xc4, 0x03, 't', ':', 'z'}, &to); err != nil || to.s != "z" {
		t.Errorf("bin into textOnly: %v %v", to, err)
	}
	// A method's error is an *UnmarshalerError with the value's offset, after the rest decoded.
	var list []textOnly
	err := Unmarshal([]byte{0x92, 0xa3, 't', ':', 'a', 0xa1, 'x'}, &list)
	var ue *UnmarshalerError
	if !errors.As(err, &ue) || ue.Offset != 5 || len(list) != 2 || list[0].s != "a" {
		t.Errorf("UnmarshalText error: %v, %v", err, list)
	}
	// An int is not a text.
	var te *UnmarshalTypeError
	if err := Unmarshal([]byte{0x01}, &to); !errors.As(err, &te) {
		t.Errorf("int into textOnly: %v", err)
	}
}

type opaque struct{ secret int }

type allDropped struct {
	A int `msgpack:"-"`
	b int
}

// TestOpaqueStruct: a struct whose fields are all unexported is an error both ways, not an
// empty map; struct{} and a struct whose fields are all dropped by "-" stay empty maps.
func TestOpaqueStruct(t *testing.T) {
	for _, v := range []any{opaque{1}, &sync.Mutex{}, struct{ X opaque }{}} {
		_, err := Marshal(v)
		var ue *UnsupportedTypeError
		if !errors.As(err, &ue) || ue.Type != reflect.TypeFor[opaque]() && ue.Type != reflect.TypeFor[sync.Mutex]() {
			t.Errorf("Marshal(%T): %v", v, err)
		}
	}
	var o opaque
	var ue *UnsupportedTypeError
	if err := Unmarshal([]byte{0x81, 0xa1, 'a', 0x01}, &o); !errors.As(err, &ue) {
		t.Errorf("Unmarshal into opaque: %v", err)
	}
	for _, v := range []any{struct{}{}, allDropped{A: 1, b: 2}, map[string]struct{}{}} {
		if b, err := Marshal(v); err != nil || b[0] != 0x80 {
			t.Errorf("Marshal(%T) = %x, %v", v, b, err)
		}
	}
}

type kelvin struct{ deg float64 }

type own2 struct{ own }

// TestRegisterCodec: a codec registered for a type you do not own comes first, both ways.
func TestRegisterCodec(t *testing.T) {
	RegisterCodec(func(b []byte, v kelvin) ([]byte, error) { return AppendFloat64(b, v.deg), nil },
		func(data []byte) (kelvin, error) {
			f, _, err := ReadFloat64(data)
			return kelvin{f}, err
		})
	RegisterCodec(func(b []byte, v own2) ([]byte, error) { return AppendString(b, "own"), nil }, nil)
	b, err := Marshal([]kelvin{{21.5}})
	if err != nil || hex.EncodeToString(b) != "91cb4035800000000000" {
		t.Fatalf("Marshal: %x %v", b, err)
	}
	var back []kelvin
	if err := Unmarshal(b, &back); err != nil || back[0].deg != 21.5 {
		t.Fatalf("Unmarshal: %v %v", back, err)
	}
	// It overrides the type's own MarshalMsgpack; decoding, with no unmarshal registered, still
	// uses UnmarshalMsgpack.
	if b, err := Marshal(own2{}); err != nil || string(b) != "\xa3own" {
		t.Fatalf("Marshal(own2): %x %v", b, err)
	}
	var o own2
	if err := Unmarshal([]byte{0x05}, &o); err != nil || o.n != 5 {
		t.Fatalf("Unmarshal(own2): %v %v", o, err)
	}
	// A codec that appends two values is an error, not corrupt output.
	type twice struct{}
	RegisterCodec(func(b []byte, v twice) ([]byte, error) { return AppendNil(AppendNil(b)), nil }, nil)
	var me *MarshalerError
	if _, err := Marshal(twice{}); !errors.As(err, &me) {
		t.Fatalf("two values: %v", err)
	}
}
