package mpk

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"
)

type product struct {
	Id          int64
	Name        string
	Description string
	Price       int32
	Colors      []string
}

type tagged struct {
	Renamed string  `msgpack:"r"`
	Empty   string  `msgpack:",omitempty"`
	Zero    zeroish `msgpack:",omitzero"`
	Skipped int     `msgpack:"-"`
	JSONed  int     `json:"j"`
	private int
}

type zeroish struct{ N int }

func (z zeroish) IsZero() bool { return z.N == 7 }

type Inner struct {
	A int
	B string
}

type outer struct {
	Inner
	*Ptr
	B string // shadows Inner.B
}

type Ptr struct{ P int }

type point struct {
	_ struct{} `msgpack:",asarray"`
	X int
	Y int
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMarshalStruct(t *testing.T) {
	p := product{Id: 191919191919, Name: "n", Price: 18900, Colors: []string{"red"}}
	b, err := Marshal(&p)
	if err != nil {
		t.Fatal(err)
	}
	want := "85a24964cf0000002caf46776fa44e616d65a16eab4465736372697074696f6ea0a55072696365cd49d4a6436f6c6f727391a3726564"
	if hex.EncodeToString(b) != want {
		t.Fatalf("got %x\nwant %s", b, want)
	}
	var q product
	if err := Unmarshal(b, &q); err != nil || !reflect.DeepEqual(p, q) {
		t.Fatalf("round trip: %+v, %v", q, err)
	}
}

func TestTags(t *testing.T) {
	v := tagged{Renamed: "x", Zero: zeroish{7}, Skipped: 5, JSONed: 3, private: 1}
	b, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	// r, JSONed: omitempty drops Empty, omitzero drops Zero through IsZero, "-" drops Skipped.
	if got := hex.EncodeToString(b); got != "82a172a178a64a534f4e656403" {
		t.Fatalf("got %s", got)
	}
	b, err = EncodeOptions{JSONTags: true}.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(b); got != "82a172a178a16a03" {
		t.Fatalf("json tags: got %s", got)
	}
	var back tagged
	if err := (DecodeOptions{JSONTags: true}).Unmarshal(b, &back); err != nil || back.JSONed != 3 || back.Renamed != "x" {
		t.Fatalf("json tags back: %+v %v", back, err)
	}
}

func TestEmbedded(t *testing.T) {
	v := outer{Inner: Inner{A: 1, B: "inner"}, B: "outer"}
	b, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	// The nil *Ptr contributes no field; the outer B shadows Inner.B.
	if got := hex.EncodeToString(b); got != "82a14101a142a56f75746572" {
		t.Fatalf("got %s", got)
	}
	var back outer
	if err := Unmarshal(mustHex(t, "83a14101a142a56f75746572a15005"), &back); err != nil {
		t.Fatal(err)
	}
	if back.A != 1 || back.B != "outer" || back.Ptr == nil || back.P != 5 {
		t.Fatalf("got %+v", back)
	}
}

func TestAsArray(t *testing.T) {
	b, err := Marshal(point{X: 1, Y: -1})
	if err != nil || hex.EncodeToString(b) != "9201ff" {
		t.Fatalf("got %x %v", b, err)
	}
	var p point
	if err := Unmarshal(b, &p); err != nil || p.X != 1 || p.Y != -1 {
		t.Fatalf("got %+v %v", p, err)
	}
}

func TestMarshalKinds(t *testing.T) {
	tm := time.Date(2024, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600))
	cases := []struct {
		v    any
		want string
	}{
		{nil, "c0"},
		{true, "c3"},
		{int8(-1), "ff"},
		{uint16(300), "cd012c"},
		{-129, "d1ff7f"},
		{float32(1.5), "ca3fc00000"},
		{1.5, "cb3ff8000000000000"},
		{"héllo", "a668c3a96c6c6f"},
		{[]byte{1, 2}, "c4020102"},
		{[]byte(nil), "c0"},
		{[2]byte{1, 2}, "c4020102"},
		{[]int{1, 2}, "920102"},
		{map[string]int{"b": 2, "a": 1}, "82a16101a16202"},
		{map[int]bool{2: true, -1: false}, "82ffc202c3"},
		{(*int)(nil), "c0"},
		{[]any{"a", int64(1), nil}, "93a16101c0"},
		{tm, "d7ff0000001865936f15"},
		{Ext{Type: 5, Data: []byte{1}}, "d40501"},
		{RawMessage{0x92, 0xc3, 0xc2}, "92c3c2"},
		{Timestamp{Sec: -1}, "c70cff00000000ffffffffffffffff"},
	}
	for _, c := range cases {
		b, err := Marshal(c.v)
		if err != nil || hex.EncodeToString(b) != c.want {
			t.Errorf("Marshal(%#v) = %x, %v; want %s", c.v, b, err, c.want)
		}
	}
	if _, err := Marshal(make(chan int)); !errors.As(err, new(*UnsupportedTypeError)) {
		t.Errorf("chan: %v", err)
	}
}

func TestUnmarshalConversions(t *testing.T) {
	var i8 int8
	if err := Unmarshal(mustHex(t, "d0ff"), &i8); err != nil || i8 != -1 {
		t.Errorf("int8: %d %v", i8, err)
	}
	var u uint
	err := Unmarshal(mustHex(t, "ff"), &u)
	var te *UnmarshalTypeError
	if !errors.As(err, &te) || te.Offset != 0 || te.Value != "int -1" {
		t.Errorf("uint from -1: %v", err)
	}
	var f float64
	if err := Unmarshal(mustHex(t, "ca3fc00000"), &f); err != nil || f != 1.5 {
		t.Errorf("float: %v %v", f, err)
	}
	var s string
	if err := Unmarshal(mustHex(t, "c4026869"), &s); err != nil || s != "hi" {
		t.Errorf("bin into string: %q %v", s, err)
	}
	var tm time.Time
	if err := Unmarshal(mustHex(t, "d6ff00000001"), &tm); err != nil || !tm.Equal(time.Unix(1, 0)) || tm.Location() != time.UTC {
		t.Errorf("time: %v %v", tm, err)
	}
	var big any
	if err := Unmarshal(mustHex(t, "cfffffffffffffffff"), &big); err != nil || big != uint64(math.MaxUint64) {
		t.Errorf("uint64 into any: %#v %v", big, err)
	}
	var m any
	if err := (DecodeOptions{MapAnyAny: true}).Unmarshal(mustHex(t, "81a16101"), &m); err != nil ||
		!reflect.DeepEqual(m, map[any]any{"a": int64(1)}) {
		t.Errorf("map[any]any: %#v %v", m, err)
	}
	if err := Unmarshal(mustHex(t, "8101a161"), &m); err != nil || !reflect.DeepEqual(m, map[any]any{int64(1): "a"}) {
		t.Errorf("int key: %#v %v", m, err)
	}
}

func TestTypeErrorThenDecodeErrorWins(t *testing.T) {
	// {"Id": "x"} then a trailing byte: the trailing byte is reported, not the type.
	var p product
	err := Unmarshal(mustHex(t, "81a24964a178c0"), &p)
	var de *DecodeError
	if !errors.As(err, &de) || de.Kind != TrailingBytes || de.Offset != 6 {
		t.Fatalf("got %v", err)
	}
	err = Unmarshal(mustHex(t, "82a24964a178a44e616d65a16e"), &p)
	var te *UnmarshalTypeError
	if !errors.As(err, &te) || te.Field != "Id" || te.Offset != 4 || p.Name != "n" {
		t.Fatalf("got %v, %+v", err, p)
	}
}

func TestInvalidUnmarshal(t *testing.T) {
	var p product
	if err := Unmarshal([]byte{0xc0}, p); !errors.As(err, new(*InvalidUnmarshalError)) {
		t.Errorf("non-pointer: %v", err)
	}
	if err := Unmarshal([]byte{0xc0}, nil); !errors.As(err, new(*InvalidUnmarshalError)) {
		t.Errorf("nil: %v", err)
	}
}

type celsius float64

func (c celsius) MarshalMsgpack() ([]byte, error) { return AppendString(nil, "C"), nil }

func (c *celsius) UnmarshalMsgpack(b []byte) error {
	s, _, err := ReadString(b)
	if s == "C" {
		*c = 1
	}
	return err
}

func TestMarshaler(t *testing.T) {
	v := struct{ T celsius }{T: 20}
	b, err := Marshal(v)
	if err != nil || !bytes.Equal(b, mustHex(t, "81a154a143")) {
		t.Fatalf("got %x %v", b, err)
	}
	v.T = 0
	if err := Unmarshal(b, &v); err != nil || v.T != 1 {
		t.Fatalf("got %v %v", v.T, err)
	}
}

type rgb struct{ R, G, B uint8 }

func init() {
	// 77 is an ext type the shared corpus does not use, so decoding it there stays an Ext.
	RegisterExt(77,
		func(c rgb) ([]byte, error) { return []byte{c.R, c.G, c.B}, nil },
		func(b []byte) (rgb, error) {
			if len(b) != 3 {
				return rgb{}, errors.New("rgb: want 3 bytes")
			}
			return rgb{b[0], b[1], b[2]}, nil
		})
}

func TestRegisterExt(t *testing.T) {
	b, err := Marshal([]rgb{{1, 2, 3}})
	if err != nil || hex.EncodeToString(b) != "91c7034d010203" {
		t.Fatalf("got %x %v", b, err)
	}
	var back []rgb
	if err := Unmarshal(b, &back); err != nil || back[0] != (rgb{1, 2, 3}) {
		t.Fatalf("got %v %v", back, err)
	}
	var x any
	if err := Unmarshal(b, &x); err != nil || x.([]any)[0] != (rgb{1, 2, 3}) {
		t.Fatalf("any: %#v %v", x, err)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering -1 did not panic")
		}
	}()
	RegisterExt(-1, func(int) ([]byte, error) { return nil, nil }, func([]byte) (int, error) { return 0, nil })
}

type node struct {
	V    int
	Next *node
}

func TestRecursiveType(t *testing.T) {
	n := &node{V: 1, Next: &node{V: 2}}
	b, err := Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	var back node
	if err := Unmarshal(b, &back); err != nil || back.Next == nil || back.Next.V != 2 || back.Next.Next != nil {
		t.Fatalf("got %+v %v", back, err)
	}
	n.Next.Next = n
	if _, err := Marshal(n); err == nil {
		t.Fatal("a pointer cycle encoded without error")
	}
}

func TestStringsAreIndependent(t *testing.T) {
	data := mustHex(t, "92a3616263a3646566")
	var a []string
	if err := Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	for i := range data {
		data[i] = 0
	}
	if a[0] != "abc" || a[1] != "def" {
		t.Fatalf("decoded strings alias the input: %q", a)
	}
}

// TestMapWithNaNKeys marshals maps whose keys include NaNs, which no map lookup finds: every pair
// is written with its own value, and decoding gives the same pairs back.
func TestMapWithNaNKeys(t *testing.T) {
	floats := map[float64]string{math.NaN(): "a", math.NaN(): "b", 1.5: "c"}
	anys := map[any]any{math.NaN(): int64(7), "k": int64(8)}
	for _, m := range []any{floats, anys} {
		b, err := Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var back map[any]any
		if err := Unmarshal(b, &back); err != nil {
			t.Fatalf("%x: %v", b, err)
		}
		if len(back) != reflect.ValueOf(m).Len() {
			t.Fatalf("%x: %d pairs back, want %d", b, len(back), reflect.ValueOf(m).Len())
		}
		for k, v := range back {
			if f, ok := k.(float64); ok && math.IsNaN(f) && v == nil {
				t.Fatalf("%x: a NaN key lost its value", b)
			}
		}
	}
	b, _ := Marshal(anys)
	var back map[any]any
	if err := Unmarshal(b, &back); err != nil || back["k"] != int64(8) {
		t.Fatalf("%x: %v %v", b, back, err)
	}
	for k, v := range back {
		if f, ok := k.(float64); ok && (!math.IsNaN(f) || v != int64(7)) {
			t.Fatalf("%x: key %v value %v", b, k, v)
		}
	}
}
