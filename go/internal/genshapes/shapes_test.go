package genshapes

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"net/netip"
	"net/url"
	"os"
	"reflect"
	"testing"
	"time"

	"mpk.dev/go/mpk/internal/gen"
)

type generated interface {
	MarshalMsg([]byte) ([]byte, error)
	UnmarshalMsg([]byte) ([]byte, error)
}

// TestShapesFileIsCurrent: the committed mpk_gen.go is what the generator writes now (and the
// package builds, or this test would not run).
func TestShapesFileIsCurrent(t *testing.T) {
	want, err := gen.Generate(".", nil, "mpk_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("mpk_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Fatal("mpk_gen.go is stale: run go generate")
	}
}

// TestSkippedTypes: mpkgen writes no methods for a generic type or one that promotes fields
// through an embedded pointer, and names either with -type as an error.
func TestSkippedTypes(t *testing.T) {
	src, err := os.ReadFile("mpk_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"EmbedPtr", "Page", "Red"} {
		if bytes.Contains(src, []byte("func (z *"+name)) {
			t.Errorf("%s has generated methods", name)
		}
	}
	// Named with -type, it is an error (one run: each type-checks the package from source).
	if _, err := gen.Generate(".", []string{"EmbedPtr"}, "mpk_gen.go"); err == nil {
		t.Errorf("-type EmbedPtr: no error")
	}
}

func shapeValues() []generated {
	n := 7
	pn := &n
	u, _ := url.Parse("https://example.com/a?b=c")
	when := time.Date(2024, 2, 29, 12, 0, 0, 5, time.UTC)
	return []generated{
		&EmbedVal{Inner: Inner{A: 1, S: "s"}, B: 2},
		&EmbedVal{},
		&OptionsOnlyTie{tieA{1}, tieB{2}, 3},
		&TaggedTie{tieB{1}, tieC{2}},
		&MarshalerField{C: Red{1}, P: &Red{2}},
		&MarshalerField{},
		&OtherPackages{
			U: *u, PU: u, Addr: netip.MustParseAddr("10.0.0.1"), Prefix: netip.MustParsePrefix("10.0.0.0/8"),
			Int: big.NewInt(-5), Dur: time.Hour, Num: json.Number("1.5"), Raw: json.RawMessage(`{}`),
			When: when, Lvl: 3, Lvls: []Level{1, 2}, ByKey: map[Key]int{"a": 1},
		},
		&OtherPackages{},
		&UnexportedEmbed{inner{A: 1, b: 2}, 3},
		&Pointers{PP: &pn, Node: &Node{V: 1, Next: &Node{V: 2}, Kids: []Node{{V: 3}}}},
		&Pointers{},
		&Keys{Ints: map[int]string{2: "b", 1: "a"}, Addrs: map[netip.Addr]int{netip.MustParseAddr("::1"): 1}, Bools: map[bool]bool{true: false}},
		&Tags{Renamed: 1, Empty: "e", Zero: 2, Both: []int{1}, ZeroSlice: []int{}, Arr: [2]int{1, 0}, ArrZero: [2]int{0, 1},
			Struct: Inner{A: 1}, Custom: Zeroer{1}, PCustom: &Zeroer{42}, Time: when, PTime: &when, Gone: 1, Dash: 2, unexp: 3},
		&Tags{Custom: Zeroer{42}},
		&Tags{},
		&VMArray{X: 1, Y: 2, S: "s"},
		&VMArray{},
		&VMOmit{A: 1},
		&VMOmit{},
		&BlankArray{A: 1, B: &Inner{A: 2}},
		&BlankArray{},
	}
}

// TestGeneratedEqualsReflection is the differential test: for every shape, MarshalMsg writes the
// bytes Marshal writes, and UnmarshalMsg of those bytes gives the value Unmarshal gives.
func TestGeneratedEqualsReflection(t *testing.T) {
	for _, v := range shapeValues() {
		name := reflect.TypeOf(v).Elem().Name()
		want, err := reflectOnly.Marshal(v)
		if err != nil {
			t.Errorf("%s: Marshal: %v", name, err)
			continue
		}
		got, err := v.MarshalMsg(nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: MarshalMsg\n got %s, %v\nwant %s", name, hex.EncodeToString(got), err, hex.EncodeToString(want))
			continue
		}
		viaReflect := reflect.New(reflect.TypeOf(v).Elem())
		if err := reflectDecode.Unmarshal(want, viaReflect.Interface()); err != nil {
			t.Errorf("%s: Unmarshal: %v", name, err)
			continue
		}
		viaGen := reflect.New(reflect.TypeOf(v).Elem()).Interface().(generated)
		if rest, err := viaGen.UnmarshalMsg(want); err != nil || len(rest) != 0 {
			t.Errorf("%s: UnmarshalMsg: %v, %d left", name, err, len(rest))
			continue
		}
		if !reflect.DeepEqual(viaGen, viaReflect.Interface()) {
			t.Errorf("%s: decoded\n gen %+v\nrefl %+v", name, viaGen, viaReflect.Interface())
		}
	}
}
