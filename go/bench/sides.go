package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	shamaton "github.com/shamaton/msgpack/v2"
	"github.com/tinylib/msgp/msgp"
	vmihailenco "github.com/vmihailenco/msgpack/v5"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"mpk.dev/go/bench/msgpgen"
	"mpk.dev/go/bench/wpb"
	"mpk.dev/go/mpk"
)

// A Side is one library's way to handle one value: Marshal encodes it (nil when the side only
// decodes), Unmarshal decodes Input into a fresh value (nil when the side only encodes). Every side of a Case has been checked to
// give back the value it was handed before anything is timed.
type Side struct {
	Name      string
	Input     []byte
	Marshal   func() ([]byte, error)
	Unmarshal func(data []byte) (any, error)
	// Aliases: a value this side decoded changed when its input was overwritten afterwards (its
	// decoded []byte or string share the input's memory: a zero-copy side). Probed by
	// probeAliasing on this case's value, not taken from the side's documentation.
	Aliases bool
	// Copies marks a side whose aliasing was not probed because it cannot alias (protobuf's Go
	// messages own their bytes; encoding/json reads text).
	Copies bool
}

// A Case is one value handled by every side.
type Case struct {
	Name     string // a workload id of build/bench-workloads/manifest.json, or a name of our own
	Title    string // the manifest's title, when Name is a workload id
	Fallback string // the workload id a generated value stands in for ("" for none)
	Typed    bool   // Go types (structs), not `any` trees
	Variant  string // the sidecar's variant ("any" where the same workload also has a typed case)
	Sides    []Side
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// The options that make mpk.Marshal and Unmarshal use reflection for generated types too.
var (
	reflectEnc = mpk.EncodeOptions{IgnoreGenerated: true}
	reflectDec = mpk.DecodeOptions{IgnoreGenerated: true}
)

// UnsortedSide is the name of the side that marshals `any` trees with
// EncodeOptions.UnsortedMapKeys (map pairs in Go's iteration order, as the peers write them);
// the side named "mpk" is the default (string keys sorted).
const UnsortedSide = "mpk-unsorted"

var unsortedEnc = mpk.EncodeOptions{UnsortedMapKeys: true}

// hasMap reports whether the tree holds a map (where the order of pairs matters).
func hasMap(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		return true
	case map[any]any:
		return true
	case []any:
		for _, x := range v {
			if hasMap(x) {
				return true
			}
		}
	}
	return false
}

// genPtr is the method set mpkgen and msgp both write.
type genPtr[T any] interface {
	*T
	MarshalMsg([]byte) ([]byte, error)
	UnmarshalMsg([]byte) ([]byte, error)
}

// structCase builds the sides for v and its msgp twin, and a protobuf side when pbMsg is not nil
// (a message of bench/workloads/workloads.proto with the same field names). msgp reads mpk's
// bytes (same keys) to fill its twin; protobuf reads encoding/json's text (the json tags are the
// proto field names).
func structCase[T any, PT genPtr[T], M any, PM genPtr[M]](name string, v PT, pbMsg func() proto.Message) Case {
	var twin M
	b, err := mpk.Marshal(v)
	must(err)
	_, err = PM(&twin).UnmarshalMsg(b)
	must(err)
	sides := []Side{
		// mpk.Marshal and Unmarshal take a type's generated methods when it has them: the
		// reflection path is measured with IgnoreGenerated, and what a user of a generated type
		// gets from Marshal and Unmarshal as mpk-auto.
		{Name: "mpk", Marshal: func() ([]byte, error) { return reflectEnc.Marshal(v) },
			Unmarshal: func(d []byte) (any, error) { var x T; err := reflectDec.Unmarshal(d, &x); return &x, err }},
		{Name: "mpk-auto", Marshal: func() ([]byte, error) { return mpk.Marshal(v) },
			Unmarshal: func(d []byte) (any, error) { var x T; err := mpk.Unmarshal(d, &x); return &x, err }},
		{Name: "mpkgen", Marshal: func() ([]byte, error) { return v.MarshalMsg(nil) },
			Unmarshal: func(d []byte) (any, error) { var x T; _, err := PT(&x).UnmarshalMsg(d); return &x, err }},
		{Name: "msgp", Marshal: func() ([]byte, error) { return PM(&twin).MarshalMsg(nil) },
			Unmarshal: func(d []byte) (any, error) { var x M; _, err := PM(&x).UnmarshalMsg(d); return &x, err }},
		{Name: "vmihailenco", Marshal: func() ([]byte, error) { return vmihailenco.Marshal(v) },
			Unmarshal: func(d []byte) (any, error) { var x T; err := vmihailenco.Unmarshal(d, &x); return &x, err }},
		{Name: "shamaton", Marshal: func() ([]byte, error) { return shamaton.Marshal(v) },
			Unmarshal: func(d []byte) (any, error) { var x T; err := shamaton.Unmarshal(d, &x); return &x, err }},
	}
	if pbMsg != nil {
		j, err := json.Marshal(v)
		must(err)
		msg := pbMsg()
		must(protojson.Unmarshal(j, msg))
		sides = append(sides, Side{Name: "protobuf", Copies: true, Marshal: func() ([]byte, error) { return proto.Marshal(msg) },
			Unmarshal: func(d []byte) (any, error) { x := pbMsg(); err := proto.Unmarshal(d, x); return x, err }})
	}
	sides = append(sides, Side{Name: "json", Copies: true, Marshal: func() ([]byte, error) { return json.Marshal(v) },
		Unmarshal: func(d []byte) (any, error) { var x T; err := json.Unmarshal(d, &x); return &x, err }})
	want, _ := json.Marshal(v)
	for i := range sides {
		s := &sides[i]
		s.Input, err = s.Marshal()
		must(err)
		got, err := s.Unmarshal(s.Input)
		must(err)
		if !jsonEqual(toJSON(got), want) {
			panic(fmt.Sprintf("%s/%s: the round trip changed the value: %s", name, s.Name, toJSON(got)))
		}
		probeAliasing(s, nil)
	}
	return Case{Name: name, Typed: true, Sides: sides}
}

// probeAliasing decodes a copy of the side's input, overwrites the copy, and looks whether the
// decoded value still equals want (the value the side was checked to decode): if not, the side's
// decoded []byte or strings point into the input (a zero-copy decoder, which the bar does not
// compare against a copying one). want nil: compare through JSON text (struct values).
func probeAliasing(s *Side, want any) {
	if s.Copies || s.Unmarshal == nil {
		return
	}
	buf := append([]byte(nil), s.Input...)
	got, err := s.Unmarshal(buf)
	must(err)
	var before []byte
	if want == nil {
		before = toJSON(got)
	}
	for i := range buf {
		buf[i] ^= 0x55
	}
	if want == nil {
		s.Aliases = !bytes.Equal(before, toJSON(got))
	} else {
		s.Aliases = !sameValue(got, want)
	}
}

func toJSON(v any) []byte {
	if m, ok := v.(proto.Message); ok {
		b, _ := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(m)
		return b
	}
	b, _ := json.Marshal(normalize(v))
	return b
}

// ProductCase is the seed's Product.
func ProductCase() Case {
	p := SampleProduct()
	return structCase[Product, *Product, msgpgen.Product, *msgpgen.Product]("product", &p, func() proto.Message { return new(wpb.Product) })
}

// TweetCase is the Twitter-like status (no protobuf side: the common schemas have no Tweet).
func TweetCase() Case {
	t := SampleTweet()
	return structCase[Tweet, *Tweet, msgpgen.Tweet, *msgpgen.Tweet]("tweet", &t, nil)
}

// BenchData is ../shared/bench-data relative to the repo root (the bench runs in go/bench),
// unless MPK_BENCH_DATA says otherwise. Only used when build/bench-workloads is missing.
func BenchData() string {
	if d := os.Getenv("MPK_BENCH_DATA"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "shared", "bench-data")
}

// CorpusNames are the real documents, read from BenchData when build/bench-workloads has none.
var CorpusNames = []string{"twitter.json", "canada.json", "citm_catalog.json"}

// CorpusCase is one JSON document as an `any` tree (ints as int64) under its workload id; false
// when the file is missing.
func CorpusCase(file string) (Case, bool) {
	text, err := os.ReadFile(filepath.Join(BenchData(), file))
	if err != nil {
		return Case{}, false
	}
	doc := jsonToAny(text)
	data, err := mpk.Marshal(doc)
	must(err)
	return anySides(strings.TrimSuffix(file, ".json"), doc, data, text), true
}

// noCheck skips the checks of anySides (cmd/prof under valgrind, where they take minutes).
var noCheck = os.Getenv("MPK_BENCH_NOCHECK") == "1"

// anySides builds the sides of a document held as `any`: Marshal of the tree, and Unmarshal into
// `any` of data (its MessagePack) or text (its JSON, for encoding/json). Every side's decoded
// value is checked against the document, and probed for aliasing.
func anySides(name string, doc any, data, text []byte) Case {
	sides := []Side{
		{Name: "mpk", Input: data, Marshal: func() ([]byte, error) { return mpk.Marshal(doc) },
			Unmarshal: func(d []byte) (any, error) { var x any; err := mpk.Unmarshal(d, &x); return x, err }},
		{Name: "msgp", Input: data, Marshal: func() ([]byte, error) { return msgp.AppendIntf(nil, doc) },
			Unmarshal: func(d []byte) (any, error) { x, _, err := msgp.ReadIntfBytes(d); return x, err }},
		{Name: "vmihailenco", Input: data, Marshal: func() ([]byte, error) { return vmihailenco.Marshal(doc) },
			Unmarshal: func(d []byte) (any, error) { var x any; err := vmihailenco.Unmarshal(d, &x); return x, err }},
		{Name: "shamaton", Input: data, Marshal: func() ([]byte, error) { return shamaton.Marshal(doc) },
			Unmarshal: func(d []byte) (any, error) { var x any; err := shamaton.Unmarshal(d, &x); return x, err }},
		{Name: "json", Input: text, Copies: true, Marshal: func() ([]byte, error) { return json.Marshal(doc) },
			Unmarshal: func(d []byte) (any, error) { var x any; err := json.Unmarshal(d, &x); return x, err }},
	}
	if hasMap(doc) {
		// The peers write maps in Go's iteration order; mpk sorts string keys by default. This
		// row is mpk with that sort turned off, to compare like with like (marshal only: the
		// decoder is the same).
		sides = append(sides[:1], append([]Side{{Name: UnsortedSide, Input: data,
			Marshal: func() ([]byte, error) { return unsortedEnc.Marshal(doc) }}}, sides[1:]...)...)
	}
	for i := range sides {
		if noCheck {
			break
		}
		s := &sides[i]
		if s.Unmarshal != nil {
			got, err := s.Unmarshal(s.Input)
			must(err)
			if !sameValue(doc, got) {
				panic(name + "/" + s.Name + ": the decoded document differs")
			}
		}
		if s.Name != "json" {
			enc, err := s.Marshal()
			must(err)
			var back any
			must(mpk.Unmarshal(enc, &back))
			if !sameValue(doc, back) {
				panic(name + "/" + s.Name + ": the encoded document differs")
			}
		}
		probeAliasing(s, doc)
	}
	return Case{Name: name, Sides: sides}
}

// SyntheticCases are `any` trees generated here: the two shapes of issue 11's list the common
// workloads do not have (a million ints, 1000 strings of 0-4 KiB), and stand-ins for the common
// Test1-Test4, table16 and rb_geojson, used only when build/bench-workloads is missing (their
// Fallback names the workload; their own names keep them apart in the sidecar).
func SyntheticCases(only string) []Case {
	var out []Case
	add := func(name, fallback string, v any) {
		if only != "" && name != only {
			return
		}
		data, err := mpk.Marshal(v)
		must(err)
		c := anySides(name, v, data, jsonText(v))
		c.Fallback = fallback
		out = append(out, c)
	}
	ints := make([]any, 1_000_000)
	for i := range ints {
		ints[i] = int64((i * 7919) % 100000)
	}
	add("ints1m", "", ints)
	strs := make([]any, 1000)
	for i := range strs {
		strs[i] = strings.Repeat("x", (i*4099)%4097)
	}
	add("strings4k", "", strs)
	bin := make([]byte, 8192)
	for i := range bin {
		bin[i] = byte(i * 131)
	}
	add("gen_test1", "test1", []any{int64(1), int64(2)})
	add("gen_test2", "test2", []any{int64(-1), int64(-2)})
	add("gen_test3", "test3", bin)
	add("gen_test4", "test4", []any{[]any{int64(1), int64(2)}, []any{int64(-1), int64(-2)}, bin})
	rows := make([]any, 16)
	for i := range rows {
		rows[i] = []any{[]string{"hello", "world"}[i%2], int64(123 + 333*(i%2)), i%2 == 0}
	}
	add("gen_table16", "table16", rows)
	features := make([]any, 50)
	for i := range features {
		ring := make([]any, 20)
		for j := range ring {
			ring[j] = []any{float64(i) + float64(j)/20, float64(j) - 0.5}
		}
		features[i] = map[string]any{"type": "Feature",
			"properties": map[string]any{"name": fmt.Sprintf("f%d", i), "pop": int64(i * 1000)},
			"geometry":   map[string]any{"type": "Polygon", "coordinates": []any{ring}}}
	}
	add("gen_geojson", "rb_geojson", map[string]any{"type": "FeatureCollection", "features": features})
	return out
}

// jsonToAny decodes JSON with integers as int64, so that ids stay ints in MessagePack.
func jsonToAny(text []byte) any {
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	var x any
	must(d.Decode(&x))
	return intsFromNumbers(x)
}

func intsFromNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case []any:
		for i := range v {
			v[i] = intsFromNumbers(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = intsFromNumbers(v[k])
		}
	}
	return v
}

// jsonEqual compares two JSON texts as values, numbers by their decimal text (protojson writes
// int64 as strings, so strings of digits count as numbers).
func jsonEqual(a, b []byte) bool {
	var x, y any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(canonicalNumbers(x), canonicalNumbers(y))
}

func canonicalNumbers(v any) any {
	switch v := v.(type) {
	case string:
		if _, err := json.Number(v).Int64(); err == nil {
			return "n:" + v
		}
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return "n:" + string(v)
		}
		if f, err := v.Float64(); err == nil {
			return "n:" + strings.TrimSuffix(fmt.Sprint(f), ".0")
		}
	case []any:
		for i := range v {
			v[i] = canonicalNumbers(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = canonicalNumbers(v[k])
		}
	}
	return v
}

// normalize turns map[any]any (msgp's choice for maps) into map[string]any.
func normalize(v any) any {
	switch v := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[fmt.Sprint(k)] = normalize(x)
		}
		return m
	case map[string]any:
		for k := range v {
			v[k] = normalize(v[k])
		}
	case []any:
		for i := range v {
			v[i] = normalize(v[i])
		}
	}
	return v
}

// TextCase is a slice of structs with TextMarshaler fields, by reflection on every side that
// gives the value back; a side that does not (it ignores the interfaces and loses the fields) is
// left out and named in Notes.
func TextCase() (Case, []string) {
	v := SampleEndpoints()
	cands := []Side{
		{Name: "mpk", Marshal: func() ([]byte, error) { return mpk.Marshal(v) },
			Unmarshal: func(d []byte) (any, error) { var x []Endpoint; err := mpk.Unmarshal(d, &x); return x, err }},
		{Name: "vmihailenco", Marshal: func() ([]byte, error) { return vmihailenco.Marshal(v) },
			Unmarshal: func(d []byte) (any, error) { var x []Endpoint; err := vmihailenco.Unmarshal(d, &x); return x, err }},
		{Name: "shamaton", Marshal: func() ([]byte, error) { return shamaton.Marshal(v) },
			Unmarshal: func(d []byte) (any, error) { var x []Endpoint; err := shamaton.Unmarshal(d, &x); return x, err }},
		{Name: "json", Copies: true, Marshal: func() ([]byte, error) { return json.Marshal(v) },
			Unmarshal: func(d []byte) (any, error) { var x []Endpoint; err := json.Unmarshal(d, &x); return x, err }},
	}
	var sides []Side
	var notes []string
	for _, s := range cands {
		in, err := s.Marshal()
		if err == nil {
			var got any
			if got, err = s.Unmarshal(in); err == nil && !reflect.DeepEqual(got, v) {
				err = fmt.Errorf("the round trip gave %v", got)
			}
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("text_fields: %s left out (%v)", s.Name, firstLine(err)))
			continue
		}
		s.Input = in
		probeAliasing(&s, nil)
		sides = append(sides, s)
	}
	return Case{Name: "text_fields", Title: "16 structs with TextMarshaler fields (netip.Addr, netip.Prefix, a level)", Typed: true, Sides: sides}, notes
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
