package gentest

import (
	"bytes"
	"errors"
	"math"
	"math/rand"
	"os"
	"reflect"
	"testing"
	"time"

	"mpk.dev/go/mpk"
	"mpk.dev/go/mpk/internal/gen"
)

// TestGeneratedFileIsCurrent regenerates mpk_gen.go in memory: the committed file must be what
// the generator writes now.
func TestGeneratedFileIsCurrent(t *testing.T) {
	want, err := gen.Generate(".", []string{"Product", "Mixed", "Item", "Point", "Base", "Tree", "Order", "Pages", "Page4k", "Book"}, "mpk_gen.go")
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

// TestGeneratedMatchesReflection encodes random values both ways (the bytes must be equal) and
// decodes them both ways (the values must be equal).
func TestGeneratedMatchesReflection(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 500; i++ {
		var m Mixed
		fill(rng, reflect.ValueOf(&m).Elem(), 0)
		m.Gone = false
		viaReflection, err := reflectOnly.Marshal(&m)
		if err != nil {
			t.Fatal(err)
		}
		generated, err := m.MarshalMsg(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(viaReflection, generated) {
			t.Fatalf("value %d: encodings differ\nreflection %x\ngenerated  %x", i, viaReflection, generated)
		}
		if size := m.Msgsize(); size < len(generated) {
			t.Fatalf("value %d: Msgsize %d below the encoded size %d", i, size, len(generated))
		}
		var a, b Mixed
		if err := reflectDecode.Unmarshal(generated, &a); err != nil {
			t.Fatal(err)
		}
		rest, err := b.UnmarshalMsg(generated)
		if err != nil || len(rest) != 0 {
			t.Fatalf("value %d: UnmarshalMsg: %v, %d left", i, err, len(rest))
		}
		if !reflect.DeepEqual(a, b) {
			av, bv := reflect.ValueOf(a), reflect.ValueOf(b)
			for f := 0; f < av.NumField(); f++ {
				if !reflect.DeepEqual(av.Field(f).Interface(), bv.Field(f).Interface()) {
					t.Errorf("field %s: %#v vs %#v", av.Type().Field(f).Name, av.Field(f).Interface(), bv.Field(f).Interface())
				}
			}
			t.Fatalf("value %d: decodings differ\nreflection %+v\ngenerated  %+v", i, a, b)
		}
	}
}

func TestGeneratedProduct(t *testing.T) {
	p := Product{Id: 191919191919, Name: "Trail shoe", Description: "light", Price: 18900, Colors: []string{"red", "blue"}}
	b, err := p.MarshalMsg(nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := reflectOnly.Marshal(&p)
	if !bytes.Equal(b, want) {
		t.Fatalf("got %x want %x", b, want)
	}
	var q Product
	if rest, err := q.UnmarshalMsg(append(b, 0xc0)); err != nil || !reflect.DeepEqual(p, q) || len(rest) != 1 {
		t.Fatalf("got %+v %v", q, err)
	}
}

// TestGeneratedErrorOffsets cuts a message at every length: UnmarshalMsg must report the same
// kind at the same offset as Unmarshal.
func TestGeneratedErrorOffsets(t *testing.T) {
	p := Product{Id: 1, Name: "abc", Description: "a longer description of 34 bytes..", Colors: []string{"red"}}
	b, _ := p.MarshalMsg(nil)
	for cut := 0; cut < len(b); cut++ {
		var q, r Product
		_, genErr := q.UnmarshalMsg(b[:cut])
		refErr := reflectDecode.Unmarshal(b[:cut], &r)
		var g, want *mpk.DecodeError
		if !errors.As(genErr, &g) || !errors.As(refErr, &want) || *g != *want {
			t.Fatalf("cut at %d: generated %v, reflection %v", cut, genErr, refErr)
		}
	}
	// Price as a str is a type error at the value's head.
	bad := []byte{0x81, 0xa5, 'P', 'r', 'i', 'c', 'e', 0xa1, 'x'}
	var q Product
	_, err := q.UnmarshalMsg(bad)
	var te *mpk.UnmarshalTypeError
	if !errors.As(err, &te) || te.Offset != 7 {
		t.Fatalf("got %v", err)
	}
}

// fill sets v to a random value; containers get 0..3 elements, some pointers and slices stay nil.
func fill(rng *rand.Rand, v reflect.Value, depth int) {
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(time.Unix(rng.Int63n(1<<40)-1<<39, rng.Int63n(1e9)).UTC()))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(rng.Intn(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x := rng.Int63() >> rng.Intn(64)
		if rng.Intn(2) == 0 {
			x = -x
		}
		for v.OverflowInt(x) {
			x /= 3
		}
		v.SetInt(x)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		x := rng.Uint64() >> rng.Intn(64)
		for v.OverflowUint(x) {
			x /= 3
		}
		v.SetUint(x)
	case reflect.Float32:
		v.SetFloat(float64(float32(rng.NormFloat64() * 1e3)))
	case reflect.Float64:
		v.SetFloat(rng.NormFloat64() * 1e6)
	case reflect.String:
		const letters = "abcdefghijklmnopqrstuvwxyzé"
		n := rng.Intn(40)
		s := make([]rune, n)
		for i := range s {
			s[i] = []rune(letters)[rng.Intn(len([]rune(letters)))]
		}
		v.SetString(string(s))
	case reflect.Slice:
		if rng.Intn(5) == 0 {
			return
		}
		n := rng.Intn(4)
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := 0; i < n; i++ {
			fill(rng, v.Index(i), depth+1)
		}
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fill(rng, v.Index(i), depth+1)
		}
	case reflect.Map:
		if rng.Intn(5) == 0 {
			return
		}
		v.Set(reflect.MakeMap(v.Type()))
		for i := rng.Intn(4); i > 0; i-- {
			k := reflect.New(v.Type().Key()).Elem()
			e := reflect.New(v.Type().Elem()).Elem()
			fill(rng, k, depth+1)
			fill(rng, e, depth+1)
			v.SetMapIndex(k, e)
		}
	case reflect.Pointer:
		if rng.Intn(2) == 0 {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(rng, v.Elem(), depth+1)
	case reflect.Interface:
		switch rng.Intn(3) {
		case 0:
			v.Set(reflect.ValueOf(rng.Int63()))
		case 1:
			v.Set(reflect.ValueOf("any"))
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(rng, v.Field(i), depth+1)
			}
		}
	}
}

// FuzzGeneratedUnmarshal feeds any bytes to the generated UnmarshalMsg and to Unmarshal, for the
// flat Product, the Mixed of every field kind, and the self-nesting Tree: a malformed input gets
// the same kind at the same offset from both, and a valid one the same value.
func FuzzGeneratedUnmarshal(f *testing.F) {
	p := Product{Id: 191919191919, Name: "n", Description: "d", Price: 18900, Colors: []string{"red"}}
	b, _ := p.MarshalMsg(nil)
	f.Add(b)
	f.Add([]byte{0x80})
	f.Add([]byte{0x85, 0xa2, 'I', 'd', 0xc1})
	var m Mixed
	fill(rand.New(rand.NewSource(2)), reflect.ValueOf(&m).Elem(), 0)
	m.Gone = false
	b, _ = m.MarshalMsg(nil)
	f.Add(b)
	tree := Tree{Name: "root", Kids: []Tree{{Name: "a", Next: &Tree{Leaf: Point{X: 1}}}}, ByName: map[string]Tree{"b": {}}}
	b, _ = tree.MarshalMsg(nil)
	f.Add(b)
	// NaN floats, which the comparison must not call a difference.
	f.Add([]byte{0x81, 0xa3, 'F', '6', '4', 0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1})
	f.Add([]byte{0x81, 0xa4, 'l', 'e', 'a', 'f', 0x92, 0xca, 0x7f, 0xc0, 0, 1, 0})
	// A NaN key and another in an `any` map: no lookup finds the NaN, and the map's encoding
	// follows Go's random iteration order.
	f.Add([]byte{0x81, 0xa3, 'A', 'n', 'y', 0x82, 0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1, 0x01, 0x02, 0x03})
	f.Fuzz(func(t *testing.T, data []byte) {
		compareUnmarshal(t, data, new(Product), new(Product))
		compareUnmarshal(t, data, new(Tree), new(Tree))
		compareUnmarshal(t, data, new(Mixed), new(Mixed))
	})
}

// compareUnmarshal decodes data with viaGen's UnmarshalMsg and with Unmarshal into viaReflect
// (fresh values of one type) and fails when they disagree.
func compareUnmarshal(t *testing.T, data []byte, viaGen generated, viaReflect any) {
	t.Helper()
	rest, genErr := viaGen.UnmarshalMsg(data)
	if genErr == nil && len(rest) != 0 {
		return // a value followed by more bytes: Unmarshal reports trailing bytes instead
	}
	refErr := reflectDecode.Unmarshal(data, viaReflect)
	var g, r *mpk.DecodeError
	if errors.As(genErr, &g) != errors.As(refErr, &r) {
		// The generated code reads a struct only from a map, and reads nil only into
		// pointers, slices and maps: those inputs may be type errors on one side only.
		var te *mpk.UnmarshalTypeError
		if errors.As(genErr, &te) || errors.As(refErr, &te) {
			return
		}
		t.Fatalf("%T: generated: %v, reflection: %v", viaGen, genErr, refErr)
	}
	if g != nil && *g != *r {
		t.Fatalf("%T: generated: %v, reflection: %v", viaGen, genErr, refErr)
	}
	if genErr == nil && refErr == nil && !equalNaN(reflect.ValueOf(viaGen), reflect.ValueOf(viaReflect)) {
		t.Fatalf("generated %+v, reflection %+v", viaGen, viaReflect)
	}
}

// equalNaN is reflect.DeepEqual with two changes for decoded values: floats are equal when both
// are NaN (DeepEqual calls NaN different from itself), and maps are matched pair by pair (a NaN
// key is found by no lookup). Marshal's bytes are no substitute: a map with non-string keys
// encodes in Go's random iteration order.
func equalNaN(a, b reflect.Value) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	if a.Type() == reflect.TypeFor[time.Time]() && a.CanInterface() && b.CanInterface() {
		return reflect.DeepEqual(a.Interface(), b.Interface())
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return x == y || (math.IsNaN(x) && math.IsNaN(y))
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalNaN(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() {
			return false
		}
		fallthrough
	case reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := 0; i < a.Len(); i++ {
			if !equalNaN(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if !equalNaN(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		// A key without a NaN is found by lookup; b's NaN keys are listed once (every walk over
		// a map starts at a random place) and matched one to one.
		var keys, vals []reflect.Value
		for ib := b.MapRange(); ib.Next(); {
			if isNaN(ib.Key()) {
				keys, vals = append(keys, ib.Key()), append(vals, ib.Value())
			}
		}
		used := make([]bool, len(keys))
		for ia := a.MapRange(); ia.Next(); {
			if !isNaN(ia.Key()) {
				if v := b.MapIndex(ia.Key()); !v.IsValid() || !equalNaN(ia.Value(), v) {
					return false
				}
				continue
			}
			found := false
			for j := range keys {
				if !used[j] && equalNaN(ia.Key(), keys[j]) && equalNaN(ia.Value(), vals[j]) {
					used[j], found = true, true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	return a.Equal(b)
}

// isNaN reports whether v is a NaN float, or an interface holding one.
func isNaN(v reflect.Value) bool {
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	return (v.Kind() == reflect.Float32 || v.Kind() == reflect.Float64) && math.IsNaN(v.Float())
}

func TestEqualNaN(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		a, b any
		want bool
	}{
		{Mixed{F64: nan}, Mixed{F64: nan}, true},
		{Mixed{F64: nan}, Mixed{F64: 1}, false},
		{Mixed{Any: map[any]any{nan: int64(1), int64(2): int64(3)}}, Mixed{Any: map[any]any{int64(2): int64(3), nan: int64(1)}}, true},
		{Mixed{Any: map[any]any{nan: int64(1)}}, Mixed{Any: map[any]any{nan: int64(2)}}, false},
		{Mixed{Any: map[any]any{nan: int64(1), nan: int64(1)}}, Mixed{Any: map[any]any{nan: int64(1), int64(5): int64(1)}}, false},
		{Mixed{Tags: []string{}}, Mixed{}, false},
		{Mixed{S: "a"}, Mixed{S: "b"}, false},
		{Mixed{Base: Base{Created: time.Unix(1, 0).UTC()}}, Mixed{Base: Base{Created: time.Unix(1, 0).UTC()}}, true},
		{Mixed{Ptr: &Item{Sku: "x"}}, Mixed{Ptr: &Item{Sku: "y"}}, false},
	}
	for i, c := range cases {
		if got := equalNaN(reflect.ValueOf(c.a), reflect.ValueOf(c.b)); got != c.want {
			t.Errorf("case %d: got %v, want %v", i, got, c.want)
		}
	}
}

// TestGeneratedDiffersAsDocumented checks each difference from Unmarshal that the README lists:
// UnmarshalMsg reports a type error where Unmarshal decodes, and stops at the first type error
// where Unmarshal goes on to find malformed bytes after it.
func TestGeneratedDiffersAsDocumented(t *testing.T) {
	cases := []struct {
		name   string
		in     []byte
		fresh  func() generated
		refErr bool // Unmarshal's error is a *DecodeError (else none)
	}{
		{"struct from an array", []byte{0x91, 0x07}, func() generated { return new(Product) }, false},
		{"key not a str", []byte{0x82, 0x01, 0x02, 0xa4, 'N', 'a', 'm', 'e', 0xa1, 'x'}, func() generated { return new(Product) }, false},
		{"nil into a scalar", []byte{0x81, 0xa4, 'N', 'a', 'm', 'e', 0xc0}, func() generated { return new(Product) }, false},
		{"string from a bin", []byte{0x81, 0xa4, 'N', 'a', 'm', 'e', 0xc4, 1, 'x'}, func() generated { return new(Product) }, false},
		{"[]byte from a str", []byte{0x81, 0xa3, 'R', 'a', 'w', 0xa1, 'x'}, func() generated { return new(Mixed) }, false},
		{"type error, then a malformed byte", []byte{0x82, 0xa4, 'N', 'a', 'm', 'e', 0x01, 0xa2, 'I', 'd', 0xc1}, func() generated { return new(Product) }, true},
	}
	for _, c := range cases {
		_, genErr := c.fresh().UnmarshalMsg(c.in)
		refErr := reflectDecode.Unmarshal(c.in, c.fresh())
		var te *mpk.UnmarshalTypeError
		var de *mpk.DecodeError
		if !errors.As(genErr, &te) {
			t.Errorf("%s: generated: %v, want a type error", c.name, genErr)
		}
		if c.refErr && !errors.As(refErr, &de) || !c.refErr && refErr != nil {
			t.Errorf("%s: Unmarshal: %v", c.name, refErr)
		}
	}
}
