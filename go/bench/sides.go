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
	"mpk.dev/go/bench/pb"
	"mpk.dev/go/mpk"
)

// A Side is one library's way to handle one value: Marshal encodes it (nil when the side only
// decodes), Unmarshal decodes Input into a fresh value. Every side of a Case has been checked to
// give back the value it was handed before anything is timed.
type Side struct {
	Name      string
	Input     []byte
	Marshal   func() ([]byte, error)
	Unmarshal func(data []byte) (any, error)
}

// A Case is one value handled by every side.
type Case struct {
	Name  string
	Sides []Side
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

// genPtr is the method set mpkgen and msgp both write.
type genPtr[T any] interface {
	*T
	MarshalMsg([]byte) ([]byte, error)
	UnmarshalMsg([]byte) ([]byte, error)
}

// structCase builds the sides for v, its msgp twin and its protobuf twin. msgp reads mpk's
// bytes (same keys) to fill its twin; protobuf reads encoding/json's text (the json tags are the
// proto field names).
func structCase[T any, PT genPtr[T], M any, PM genPtr[M], P any, PP interface {
	*P
	proto.Message
}](name string, v PT) Case {
	var twin M
	var pbTwin P
	b, err := mpk.Marshal(v)
	must(err)
	_, err = PM(&twin).UnmarshalMsg(b)
	must(err)
	j, err := json.Marshal(v)
	must(err)
	must(protojson.Unmarshal(j, PP(&pbTwin)))
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
		{Name: "protobuf", Marshal: func() ([]byte, error) { return proto.Marshal(PP(&pbTwin)) },
			Unmarshal: func(d []byte) (any, error) { var x P; err := proto.Unmarshal(d, PP(&x)); return &x, err }},
		{Name: "json", Marshal: func() ([]byte, error) { return json.Marshal(v) },
			Unmarshal: func(d []byte) (any, error) { var x T; err := json.Unmarshal(d, &x); return &x, err }},
	}
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
	}
	return Case{Name: name, Sides: sides}
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
	return structCase[Product, *Product, msgpgen.Product, *msgpgen.Product, pb.Product, *pb.Product]("product", &p)
}

// TweetCase is the Twitter-like status.
func TweetCase() Case {
	t := SampleTweet()
	return structCase[Tweet, *Tweet, msgpgen.Tweet, *msgpgen.Tweet, pb.Tweet, *pb.Tweet]("tweet", &t)
}

// BenchData is ../shared/bench-data relative to the repo root (the bench runs in go/bench),
// unless MPK_BENCH_DATA says otherwise.
func BenchData() string {
	if d := os.Getenv("MPK_BENCH_DATA"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "shared", "bench-data")
}

// CorpusNames are the real documents decoded into `any`.
var CorpusNames = []string{"twitter.json", "canada.json", "citm_catalog.json"}

// CorpusCase decodes one JSON document, converted to MessagePack, into `any` with every
// MessagePack library; encoding/json decodes the JSON text itself as a reference. It returns
// false when the file is missing.
func CorpusCase(file string) (Case, bool) {
	text, err := os.ReadFile(filepath.Join(BenchData(), file))
	if err != nil {
		return Case{}, false
	}
	return anyCase("any/"+strings.TrimSuffix(file, ".json"), text), true
}

// anyCase builds the sides of a document held as `any` (decoded from the JSON text with
// UseNumber, then normalized by the first Marshal): Marshal of the tree and Unmarshal into any.
func anyCase(name string, text []byte) Case {
	doc := jsonToAny(text)
	data, err := mpk.Marshal(doc)
	must(err)
	sides := []Side{
		{Name: "mpk", Input: data, Marshal: func() ([]byte, error) { return mpk.Marshal(doc) },
			Unmarshal: func(d []byte) (any, error) { var x any; err := mpk.Unmarshal(d, &x); return x, err }},
		{Name: "msgp", Input: data, Marshal: func() ([]byte, error) { return msgp.AppendIntf(nil, doc) },
			Unmarshal: func(d []byte) (any, error) { x, _, err := msgp.ReadIntfBytes(d); return x, err }},
		{Name: "vmihailenco", Input: data, Marshal: func() ([]byte, error) { return vmihailenco.Marshal(doc) },
			Unmarshal: func(d []byte) (any, error) { var x any; err := vmihailenco.Unmarshal(d, &x); return x, err }},
		{Name: "shamaton", Input: data, Marshal: func() ([]byte, error) { return shamaton.Marshal(doc) },
			Unmarshal: func(d []byte) (any, error) { var x any; err := shamaton.Unmarshal(d, &x); return x, err }},
		{Name: "json", Input: text, Marshal: func() ([]byte, error) { return json.Marshal(doc) },
			Unmarshal: func(d []byte) (any, error) { var x any; err := json.Unmarshal(d, &x); return x, err }},
	}
	want, _ := json.Marshal(doc)
	for _, s := range sides {
		got, err := s.Unmarshal(s.Input)
		must(err)
		if !jsonEqual(toJSON(got), want) {
			panic(name + "/" + s.Name + ": the decoded document differs")
		}
	}
	return Case{Name: name, Sides: sides}
}

// SyntheticCases are `any` trees with other shapes than the corpus documents (issue 11's list):
// small messages (Test1-Test4), an array of a million ints, an array of strings of 0-4 KiB, a
// 16-row table and a GeoJSON FeatureCollection with properties.
func SyntheticCases() []Case {
	var out []Case
	add := func(name string, v any) {
		text, err := json.Marshal(v)
		must(err)
		out = append(out, anyCase("any/"+name, text))
	}
	add("test1 [1,2]", []any{1, 2})
	add("test2 [-1,-2]", []any{-1, -2})
	add("test3 nested", map[string]any{"a": []any{1, map[string]any{"b": []any{true, nil, "c"}}}, "d": 1.5})
	ints := make([]any, 1_000_000)
	for i := range ints {
		ints[i] = (i * 7919) % 100000
	}
	add("1M ints", ints)
	strs := make([]any, 1000)
	for i := range strs {
		strs[i] = strings.Repeat("x", (i*4099)%4097)
	}
	add("strings 0-4KiB", strs)
	rows := make([]any, 16)
	for i := range rows {
		rows[i] = map[string]any{"id": i, "name": fmt.Sprintf("row %d", i), "price": float64(i) + 0.25, "tags": []any{"a", "b"}, "active": i%2 == 0}
	}
	add("16-row table", rows)
	features := make([]any, 200)
	for i := range features {
		ring := make([]any, 20)
		for j := range ring {
			ring[j] = []any{float64(i) + float64(j)/20, float64(j) - 0.5}
		}
		features[i] = map[string]any{"type": "Feature",
			"properties": map[string]any{"name": fmt.Sprintf("parcel %d", i), "area": float64(i) * 1.5, "owner": map[string]any{"id": i, "kind": "private"}},
			"geometry":   map[string]any{"type": "Polygon", "coordinates": []any{ring}}}
	}
	add("geojson", map[string]any{"type": "FeatureCollection", "features": features})
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
