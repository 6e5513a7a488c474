package mpk

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

type pathInner struct {
	Name  string
	Attrs map[string]any
}

type pathOuter struct {
	ID    int
	Items []*pathInner
	skip  chan int // unexported: not encoded, never blamed
}

type pathEmbedded struct{ Hidden any }

type pathHolder struct {
	pathEmbedded
	After int
}

type refusing struct{}

// textRefusing encodes itself through encoding.TextMarshaler (which fails); its field is never
// encoded, so a path must not point into it.
type textRefusing struct{ C chan int }

func (textRefusing) MarshalText() ([]byte, error) { return nil, errors.New("no text") }

func (refusing) MarshalMsgpack() ([]byte, error) { return nil, errors.New("refused") }

func TestMarshalErrorPath(t *testing.T) {
	deep := any(make(chan int))
	for i := 0; i < 70; i++ {
		deep = []any{deep}
	}
	cases := []struct {
		name string
		v    any
		path string
	}{
		{"any tree", map[string]any{"a": []any{1, "x", make(chan int)}}, `$["a"][2]`},
		{"struct fields", &pathOuter{skip: make(chan int), Items: []*pathInner{{Name: "ok"}, {Attrs: map[string]any{"b": 1, "color": func() {}}}}},
			`$.Items[1].Attrs["color"]`},
		{"int keys", map[int]any{3: 1, 7: complex(1, 2)}, `$[7]`},
		{"embedded", pathHolder{pathEmbedded: pathEmbedded{Hidden: []any{make(chan bool)}}}, `$.Hidden[0]`},
		{"refused key", map[any]any{"a": 1, complex(1, 1): 2}, `$[<complex128 key>] (a map key)`},
		{"array", [2]any{1, make(chan int)}, `$[1]`},
		{"long key", map[string]any{strings.Repeat("k", 50): make(chan int)}, `$["` + strings.Repeat("k", 40) + `"...]`},
		{"deep", deep, "$" + strings.Repeat("[0]", 64) + "..."},
	}
	for _, c := range cases {
		_, err := Marshal(c.v)
		var ute *UnsupportedTypeError
		if !errors.As(err, &ute) {
			t.Fatalf("%s: %v, want an UnsupportedTypeError", c.name, err)
		}
		if ute.Path != c.path {
			t.Errorf("%s: Path %q, want %q", c.name, ute.Path, c.path)
		}
		if !strings.HasSuffix(err.Error(), " at "+c.path) {
			t.Errorf("%s: message %q does not end with the path", c.name, err.Error())
		}
	}
}

func TestMarshalErrorPathOfTheValueItself(t *testing.T) {
	_, err := Marshal(make(chan int))
	var ute *UnsupportedTypeError
	if !errors.As(err, &ute) || ute.Path != "$" || err.Error() != "mpk: unsupported type: chan int" {
		t.Fatalf("got %v (path %q)", err, ute.Path)
	}
}

func TestMarshalerAndTimestampErrorPaths(t *testing.T) {
	_, err := Marshal(map[string]any{"r": []any{refusing{}}})
	var me *MarshalerError
	if !errors.As(err, &me) || me.Path != `$["r"][0]` ||
		err.Error() != `mpk: error calling MarshalMsgpack for type mpk.refusing at $["r"][0]: refused` {
		t.Fatalf("got %v", err)
	}
	_, err = Marshal(map[string]any{"t": textRefusing{C: make(chan int)}})
	if !errors.As(err, &me) || me.Path != `$["t"]` {
		t.Fatalf("TextMarshaler: got %v (path %q)", err, me.Path)
	}
	_, err = Marshal(struct{ T []Timestamp }{T: []Timestamp{{}, {Nsec: 1e9}}})
	var te *InvalidTimestampError
	if !errors.As(err, &te) || te.Path != "$.T[1]" {
		t.Fatalf("got %v", err)
	}
}

func TestEncoderAndOptionsErrorPaths(t *testing.T) {
	var buf bytes.Buffer
	err := NewEncoder(&buf).Encode(map[string]any{"x": map[string]any{"y": make(chan int)}})
	var ute *UnsupportedTypeError
	if !errors.As(err, &ute) || ute.Path != `$["x"]["y"]` || buf.Len() != 0 {
		t.Fatalf("got %v, %d bytes written", err, buf.Len())
	}
	for _, o := range []EncodeOptions{{UnsortedMapKeys: true}, {SortMapKeys: true}, {JSONTags: true}} {
		_, err = o.Marshal(map[string]any{"b": 1, "a": []any{0, func() {}}})
		if !errors.As(err, &ute) || ute.Path != `$["a"][1]` {
			t.Fatalf("%+v: got %v", o, err)
		}
	}
}

func TestUnmarshalUnsupportedHasNoPath(t *testing.T) {
	var v struct{ x int }
	err := Unmarshal([]byte{0x80}, &v)
	var ute *UnsupportedTypeError
	if errors.As(err, &ute) && (ute.Path != "" || strings.Contains(err.Error(), " at ")) {
		t.Fatalf("got %v", err)
	}
}
