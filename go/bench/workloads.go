package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"mpk.dev/go/bench/wpb"
	"mpk.dev/go/mpk"
)

// The common workloads (bench/workloads/gen.py, written by `make bench-workloads` into
// build/bench-workloads with a manifest.json). A case named after a workload id compares the
// same bytes every other language's bench reads; when the folder is missing, the cases fall back
// to values generated here, under names of their own (the sidecar never claims a workload id for
// a value that is not the common one).

// WorkloadDir is build/bench-workloads relative to the repo root (the bench runs in go/bench),
// unless MPK_BENCH_WORKLOADS says otherwise.
func WorkloadDir() string {
	if d := os.Getenv("MPK_BENCH_WORKLOADS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "build", "bench-workloads")
}

// Workload is one entry of manifest.json.
type Workload struct {
	ID    string            `json:"id"`
	Title string            `json:"title"`
	Proto *string           `json:"proto"`
	Files map[string]string `json:"files"`
}

// Manifest reads manifest.json; nil when there is none.
func Manifest() map[string]Workload {
	b, err := os.ReadFile(filepath.Join(WorkloadDir(), "manifest.json"))
	if err != nil {
		return nil
	}
	var m struct{ Workloads []Workload }
	must(json.Unmarshal(b, &m))
	out := map[string]Workload{}
	for _, w := range m.Workloads {
		out[w.ID] = w
	}
	return out
}

func (w Workload) file(kind string) ([]byte, bool) {
	name, ok := w.Files[kind]
	if !ok {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(WorkloadDir(), name))
	return b, err == nil
}

// AnyWorkloads are the common workloads marshalled and unmarshalled as `any` trees, in the order
// of the report. The first group is issue 11's list; the second has protobuf messages too (as
// does every later typed one: the C seed's ints and strings, long and non-ASCII strings, large
// bins); the last are the schemaless documents of the Ruby and JS seeds (no protobuf message).
var AnyWorkloads = []string{
	"twitter", "citm_catalog", "canada", "rb_geojson", "table16", "test1", "test2", "test3", "test4",
	"product", "products100", "rb_image", "rb_integers", "rb_model3d",
	"c_ints", "c_strings", "long_string", "utf8_strings", "bins64k",
	"rb_twitter", "js_msgpack_lite_example", "js_msgpackr_example4", "js_protobufjs_bench",
	"js_sample_large", "js_sample_large_scored",
}

// protoMessages are the Go types protoc-gen-go made from bench/workloads/*.proto at bench time
// (run.sh), by the manifest's message names.
var protoMessages = map[string]func() proto.Message{
	"seed.Test1":                    func() proto.Message { return new(wpb.Test1) },
	"seed.Test2":                    func() proto.Message { return new(wpb.Test2) },
	"seed.Test3":                    func() proto.Message { return new(wpb.Test3) },
	"seed.Test4":                    func() proto.Message { return new(wpb.Test4) },
	"mpkbench.Product":              func() proto.Message { return new(wpb.Product) },
	"mpkbench.ProductList":          func() proto.Message { return new(wpb.ProductList) },
	"mpkbench.Table":                func() proto.Message { return new(wpb.Table) },
	"mpkbench.Image":                func() proto.Message { return new(wpb.Image) },
	"mpkbench.Ints":                 func() proto.Message { return new(wpb.Ints) },
	"mpkbench.GeoFeatureCollection": func() proto.Message { return new(wpb.GeoFeatureCollection) },
	"mpkbench.Model":                func() proto.Message { return new(wpb.Model) },
	"mpkbench.UInts":                func() proto.Message { return new(wpb.UInts) },
	"mpkbench.Strings":              func() proto.Message { return new(wpb.Strings) },
	"mpkbench.LongString":           func() proto.Message { return new(wpb.LongString) },
	"mpkbench.Blobs":                func() proto.Message { return new(wpb.Blobs) },
}

// WorkloadCases are the `any` cases: the common workloads when build/bench-workloads has them,
// else the generated fallbacks; then the two value shapes the manifest has no workload for
// (a million ints, strings of 0-4 KiB). Notes say what was missing.
func WorkloadCases() (cases []Case, notes []string) {
	return WorkloadCasesOnly(os.Getenv("MPK_BENCH_ONLY")) // cmd/prof: build one case
}

// WorkloadCasesOnly is WorkloadCases for the case named only ("" for all of them): cmd/report
// builds one case at a time, so that the others' trees are not on the heap while it is timed.
func WorkloadCasesOnly(only string) (cases []Case, notes []string) {
	man := Manifest()
	if man == nil {
		notes = append(notes, fmt.Sprintf("no %s/manifest.json (run `make bench-workloads`): the `any` rows use values generated here, named apart from the common workloads", WorkloadDir()))
	}
	for _, id := range AnyWorkloads {
		if only != "" && id != only {
			continue
		}
		w, ok := man[id]
		if !ok {
			continue
		}
		data, ok := w.file("msgpack")
		if !ok {
			notes = append(notes, id+": "+w.Files["msgpack"]+" missing, skipped")
			continue
		}
		c, note := anyCaseFromMsgpack(w, data)
		if note != "" {
			notes = append(notes, note)
		}
		if id == "product" {
			// ProductCase has the typed sides and protobuf; the `any` tree is a variant
			c.Variant = "any"
		} else if w.Proto != nil {
			if pb, ok := w.file("pb"); ok && protoMessages[*w.Proto] != nil {
				c.Sides = append(c.Sides, protoSide(id, protoMessages[*w.Proto], pb))
			} else {
				notes = append(notes, id+": no protobuf row ("+*w.Proto+" .pb missing)")
			}
		}
		cases = append(cases, c)
	}
	if !haveWorkload(man, "twitter") {
		// the corpus documents from ../shared/bench-data, when the workloads are not there
		for _, f := range CorpusNames {
			if only != "" && strings.TrimSuffix(f, ".json") != only {
				continue
			}
			if c, ok := CorpusCase(f); ok {
				cases = append(cases, c)
			}
		}
	}
	for _, c := range SyntheticCases(only) {
		if c.Fallback == "" || !haveWorkload(man, c.Fallback) {
			cases = append(cases, c)
		}
	}
	return cases, notes
}

// haveWorkload reports whether WorkloadCases builds workload id from the manifest (so that the
// corpus and generated stand-ins for it are left out), whatever case it was asked for.
func haveWorkload(man map[string]Workload, id string) bool {
	w, ok := man[id]
	if !ok || !slices.Contains(AnyWorkloads, id) {
		return false
	}
	_, ok = w.file("msgpack")
	return ok
}

// anyCaseFromMsgpack decodes a workload's MessagePack into an `any` tree (mpk's decoder: maps
// with str keys as map[string]any, ints as int64/uint64, bins as []byte) and builds the sides
// that marshal that tree and unmarshal the workload's bytes. encoding/json decodes the workload's
// .json (the text every language's JSON row reads) when it holds the same value; else (or when
// there is none) the text encoding/json writes for the tree, and the note says why.
func anyCaseFromMsgpack(w Workload, data []byte) (Case, string) {
	var doc any
	must(mpk.Unmarshal(data, &doc))
	text, note := jsonText(doc), ""
	if j, ok := w.file("json"); !ok {
		note = w.ID + ": no .json file; encoding/json decodes its own text"
	} else {
		var x any
		if err := json.Unmarshal(j, &x); err != nil || !sameValue(doc, x) {
			note = w.ID + ": the workload's .json does not hold the MessagePack value; encoding/json decodes its own text"
		} else {
			text = j
		}
	}
	c := anySides(w.ID, doc, data, text)
	c.Title = w.Title
	return c, note
}

// jsonText is the JSON for encoding/json's side: bins become base64 strings, as in the
// workload's .json.
func jsonText(doc any) []byte {
	b, err := json.Marshal(doc)
	must(err)
	return b
}

// protoSide marshals the message decoded from the workload's .pb (protoc's encoding of the same
// value) and unmarshals those bytes into a fresh message.
func protoSide(id string, mk func() proto.Message, pb []byte) Side {
	msg := mk()
	must(proto.Unmarshal(pb, msg))
	s := Side{Name: "protobuf", Input: pb, Copies: true,
		Marshal: func() ([]byte, error) { return proto.Marshal(msg) },
		Unmarshal: func(d []byte) (any, error) {
			x := mk()
			err := proto.Unmarshal(d, x)
			return x, err
		}}
	out, err := s.Marshal()
	must(err)
	back := mk()
	must(proto.Unmarshal(out, back))
	if !proto.Equal(back, msg) {
		panic(id + "/protobuf: the round trip changed the message")
	}
	return s
}

// shortName is a case's label for the tables: the title, or the id.
func (c Case) Label() string {
	if c.Title != "" && !strings.EqualFold(c.Title, c.Name) {
		return c.Name + " — " + c.Title
	}
	return c.Name
}
