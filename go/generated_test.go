package mpk

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// fakeGen has the methods mpkgen writes, with bodies that show they ran.
type fakeGen struct{ A int }

func (*fakeGen) MpkGenerated(*fakeGen) {}
func (z *fakeGen) MarshalMsg(b []byte) ([]byte, error) {
	return AppendString(b, "gen"), nil
}
func (z *fakeGen) UnmarshalMsg(b []byte) ([]byte, error) {
	rest, _, err := z.MpkDecodeNested(b, 0, 1<<20)
	return rest, err
}
func (z *fakeGen) MpkDecodeNested(b []byte, depth int, budget int64) ([]byte, int64, error) {
	z.A = 100 + depth
	rest, err := Skip(b)
	return rest, budget - 1000, err
}

// embedsGen gets fakeGen's methods promoted: it is not generated, and is encoded by its fields.
type embedsGen struct {
	fakeGen
	B int
}

// TestGeneratedFastPath: Marshal, Unmarshal, Encoder and Decoder take a type's generated methods
// (at any depth), not those promoted from an embedded generated type, and not with options
// other than the defaults.
func TestGeneratedFastPath(t *testing.T) {
	check := func(what string, got []byte, err error, want string) {
		t.Helper()
		if err != nil || hex.EncodeToString(got) != want {
			t.Errorf("%s: %x, %v; want %s", what, got, err, want)
		}
	}
	b, err := Marshal(&fakeGen{})
	check("Marshal(&T)", b, err, "a367656e")
	b, err = Marshal([]fakeGen{{}})
	check("Marshal([]T)", b, err, "91a367656e")
	b, err = Marshal(embedsGen{B: 2})
	check("Marshal(embedding)", b, err, "82a14100a14202")
	b, err = EncodeOptions{IgnoreGenerated: true}.Marshal(&fakeGen{A: 1})
	check("IgnoreGenerated", b, err, "81a14101")
	var buf bytes.Buffer
	err = NewEncoder(&buf).Encode(&fakeGen{})
	check("Encoder", buf.Bytes(), err, "a367656e")

	var g fakeGen
	if err := Unmarshal([]byte{0x81, 0xa1, 'A', 0x05}, &g); err != nil || g.A != 100 {
		t.Errorf("Unmarshal: %+v %v", g, err)
	}
	var gs [][]fakeGen
	if err := Unmarshal([]byte{0x91, 0x91, 0x80}, &gs); err != nil || gs[0][0].A != 102 {
		t.Errorf("Unmarshal nested: %+v %v (want the depth, 2, handed on)", gs, err)
	}
	var e embedsGen
	if err := Unmarshal([]byte{0x81, 0xa1, 'A', 0x05}, &e); err != nil || e.A != 5 {
		t.Errorf("Unmarshal(embedding): %+v %v", e, err)
	}
	lim := DefaultLimits()
	lim.Str = 10
	for _, o := range []DecodeOptions{{IgnoreGenerated: true}, {Limits: &lim}, {JSONTags: true}, {MaxAlloc: 1 << 30}} {
		g = fakeGen{}
		if err := o.Unmarshal([]byte{0x81, 0xa1, 'A', 0x05}, &g); err != nil || g.A != 5 {
			t.Errorf("%+v: %+v %v (want reflection)", o, g, err)
		}
	}
	dec := NewDecoder(bytes.NewReader([]byte{0x80}))
	if err := dec.Decode(&g); err != nil || g.A != 100 {
		t.Errorf("Decoder: %+v %v", g, err)
	}
	// Malformed input is reported before the generated code runs, as Unmarshal reports it.
	g = fakeGen{}
	if err := Unmarshal([]byte{0x81, 0xa1, 'A', 0xc1}, &g); err == nil || g.A != 0 {
		t.Errorf("malformed: %+v %v", g, err)
	}
}

// TestMarshalAnyTreeAllocations: a tree of 200 nested map[string]any is written with a handful
// of allocations (the output and its growth), not one per map.
func TestMarshalAnyTreeAllocations(t *testing.T) {
	root := map[string]any{}
	for i := 0; i < 200; i++ {
		root[string(rune('a'+i%26))+string(rune('a'+i/26))] = map[string]any{"x": int64(i), "y": []any{"s", map[string]any{"z": true}}}
	}
	Marshal(root) // warm the pools
	if n := testing.AllocsPerRun(20, func() { Marshal(root) }); n > 6 {
		t.Errorf("%v allocations per Marshal", n)
	}
}
