package mpk

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

type vmArray struct {
	//lint:ignore U1000 read through reflection: the struct-level tag
	_msgpack struct{} `msgpack:",as_array"`
	X, Y     int
}

type blankArray struct {
	_    struct{} `msgpack:",as_array"`
	X, Y int
}

type vmOmit struct {
	//lint:ignore U1000 read through reflection: the struct-level tag
	_msgpack struct{} `msgpack:",omitempty"`
	A        int
	B        string
	C        []int
}

// TestVmihailencoTags: vmihailenco/msgpack's struct-level tags mean the same here.
func TestVmihailencoTags(t *testing.T) {
	for _, v := range []any{vmArray{X: 1, Y: 2}, &blankArray{X: 1, Y: 2}} {
		b, err := Marshal(v)
		if err != nil || hex.EncodeToString(b) != "920102" {
			t.Errorf("Marshal(%T) = %x, %v; want 920102", v, b, err)
		}
	}
	var back vmArray
	if err := Unmarshal([]byte{0x92, 0x03, 0x04}, &back); err != nil || back.X != 3 || back.Y != 4 {
		t.Errorf("Unmarshal: %+v %v", back, err)
	}
	b, err := Marshal(vmOmit{B: "x"})
	if err != nil || hex.EncodeToString(b) != "81a142a178" {
		t.Errorf("struct-level omitempty: %x %v", b, err)
	}
}

type badOption struct {
	Name string `msgpack:"name,inline"`
}

type arrayOnField struct {
	X int `msgpack:",as_array"`
}

// TestUnknownTagOption: an option mpk does not know is an error naming the field, both ways.
func TestUnknownTagOption(t *testing.T) {
	for _, v := range []any{badOption{}, arrayOnField{}} {
		_, err := Marshal(v)
		var te *StructTagError
		if !errors.As(err, &te) || (te.Field != "Name" && te.Field != "X") {
			t.Errorf("Marshal(%T): %v", v, err)
		}
	}
	var bo badOption
	err := Unmarshal([]byte{0x80}, &bo)
	var te *StructTagError
	if !errors.As(err, &te) || te.Field != "Name" || te.Option != "inline" || !strings.Contains(err.Error(), "Name") {
		t.Errorf("Unmarshal: %v", err)
	}
}

type known struct {
	A int `msgpack:"a"`
	B int `msgpack:"b"`
}

type knownArray struct {
	_ struct{} `msgpack:",asarray"`
	A int
}

func TestDisallowUnknownFields(t *testing.T) {
	in := []byte{0x83, 0xa1, 'a', 0x01, 0xa1, 'z', 0x02, 0xa1, 'b', 0x03}
	var k known
	if err := Unmarshal(in, &k); err != nil || k != (known{1, 3}) {
		t.Fatalf("default: %+v %v", k, err)
	}
	k = known{}
	err := DecodeOptions{DisallowUnknownFields: true}.Unmarshal(in, &k)
	var ue *UnknownFieldError
	if !errors.As(err, &ue) || ue.Key != "z" || ue.Offset != 4 || k != (known{1, 3}) {
		t.Fatalf("disallow: %+v %v", k, err)
	}
	// A malformed byte later still wins.
	bad := append(append([]byte{}, in[:len(in)-1]...), 0xc1)
	if err := (DecodeOptions{DisallowUnknownFields: true}).Unmarshal(bad, &k); !errors.As(err, new(*DecodeError)) {
		t.Fatalf("malformed after unknown: %v", err)
	}
	var ka knownArray
	if err := (DecodeOptions{DisallowUnknownFields: true}).Unmarshal([]byte{0x92, 0x01, 0x02}, &ka); !errors.As(err, &ue) || ue.Offset != 2 {
		t.Fatalf("asarray surplus: %v", err)
	}
	// The stream takes the option too.
	dec := NewDecoder(bytes.NewReader(in))
	dec.SetOptions(DecodeOptions{DisallowUnknownFields: true})
	if err := dec.Decode(&k); !errors.As(err, &ue) {
		t.Fatalf("stream: %v", err)
	}
}

type customTags struct {
	ID   int    `codec:"id" msgpack:"wrong"`
	Name string `codec:"name,omitempty"`
	Skip int    `codec:"-"`
}

func TestTagName(t *testing.T) {
	v := customTags{ID: 7, Skip: 9}
	b, err := EncodeOptions{TagName: "codec"}.Marshal(v)
	if err != nil || hex.EncodeToString(b) != "81a26964"+"07" {
		t.Fatalf("TagName codec: %x %v", b, err)
	}
	var back customTags
	if err := (DecodeOptions{TagName: "codec"}).Unmarshal([]byte{0x82, 0xa2, 'i', 'd', 0x05, 0xa4, 'S', 'k', 'i', 'p', 0x01}, &back); err != nil || back != (customTags{ID: 5}) {
		t.Fatalf("decode with TagName: %+v %v", back, err)
	}
	// The default still reads msgpack tags (its own cached codecs).
	b, _ = Marshal(v)
	if !bytes.Contains(b, []byte("wrong")) {
		t.Fatalf("default tags: %x", b)
	}
}

// TestSortMapKeys: a map[any]any comes out in one order with SortMapKeys, whatever Go's map
// order; without it, at least two orders show up over a few hundred calls.
func TestSortMapKeys(t *testing.T) {
	m := map[any]any{}
	for i := 0; i < 20; i++ {
		m[float64(i)+0.5] = i
		m[true] = "t"
		m[int64(-i)] = nil
	}
	seen := map[string]bool{}
	var first []byte
	for i := 0; i < 200; i++ {
		b, err := EncodeOptions{SortMapKeys: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Fatalf("SortMapKeys gave two encodings")
		}
		plain, _ := Marshal(m)
		seen[string(plain)] = true
	}
	if len(seen) < 2 {
		t.Fatalf("without SortMapKeys the map came out in one order: the test proves nothing")
	}
	var back map[any]any
	if err := Unmarshal(first, &back); err != nil || len(back) != len(m) {
		t.Fatalf("round trip: %v %v", back, err)
	}
	// Keys are in the order of their encodings: negative fixints (e0..ff) after floats (cb).
	if first[1] != 0x00 && first[1] != 0xc2 && first[1] != 0xc3 {
		t.Fatalf("first key %x", first[1])
	}
}
