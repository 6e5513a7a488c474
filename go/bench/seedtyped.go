package bench

import (
	"bytes"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/proto"

	"mpk.dev/go/bench/msgpgen"
	"mpk.dev/go/bench/wpb"
	"mpk.dev/go/mpk"
)

// SeedTypedCases are the C++ seed's Test1-Test4 as Go structs (types.go), the sidecar's variant
// "typed", beside the `any` rows of the same workloads: mpk by reflection, mpkgen's methods,
// msgp's generated tuples, protobuf (the messages of seed.proto, decoded from the workload's
// .pb) and encoding/json into the same structs (a JSON object of the fields: encoding/json has
// no array form for a struct). The values are read from the workload's .pb; mpk's encoding of
// each is checked against the workload's MessagePack (Test1 and Test2 byte for byte; Test3 and
// Test4 hold the bin in a one-element array, one byte more than the workload's bare bin).
func SeedTypedCases() (cases []Case, notes []string) {
	man := Manifest()
	for _, id := range []string{"test1", "test2", "test3", "test4"} {
		w, ok := man[id]
		if !ok {
			continue
		}
		pb, okPB := w.file("pb")
		data, okMP := w.file("msgpack")
		if !okPB || !okMP {
			notes = append(notes, id+" (typed): the workload's .pb or .msgpack is missing, skipped")
			continue
		}
		var doc any
		must(mpk.Unmarshal(data, &doc))
		switch id {
		case "test1":
			var m wpb.Test1
			must(proto.Unmarshal(pb, &m))
			v := &Test1{A: m.GetA(), B: m.GetB()}
			cases = append(cases, seedCase[Test1, *Test1, msgpgen.Test1, *msgpgen.Test1](id, w.Title, v, doc, data,
				protoSide(id, func() proto.Message { return new(wpb.Test1) }, pb)))
		case "test2":
			var m wpb.Test2
			must(proto.Unmarshal(pb, &m))
			v := &Test2{A: m.GetA(), B: m.GetB()}
			cases = append(cases, seedCase[Test2, *Test2, msgpgen.Test2, *msgpgen.Test2](id, w.Title, v, doc, data,
				protoSide(id, func() proto.Message { return new(wpb.Test2) }, pb)))
		case "test3":
			var m wpb.Test3
			must(proto.Unmarshal(pb, &m))
			v := &Test3{Data: m.GetData()}
			cases = append(cases, seedCase[Test3, *Test3, msgpgen.Test3, *msgpgen.Test3](id, w.Title, v, []any{doc}, nil,
				protoSide(id, func() proto.Message { return new(wpb.Test3) }, pb)))
		case "test4":
			var m wpb.Test4
			must(proto.Unmarshal(pb, &m))
			v := &Test4{Test1: Test1{A: m.GetTest1().GetA(), B: m.GetTest1().GetB()},
				Test2: Test2{A: m.GetTest2().GetA(), B: m.GetTest2().GetB()},
				Test3: Test3{Data: m.GetTest3().GetData()}}
			want := doc
			if a, ok := doc.([]any); ok && len(a) == 3 {
				want = []any{a[0], a[1], []any{a[2]}}
			}
			cases = append(cases, seedCase[Test4, *Test4, msgpgen.Test4, *msgpgen.Test4](id, w.Title, v, want, nil,
				protoSide(id, func() proto.Message { return new(wpb.Test4) }, pb)))
		}
	}
	return cases, notes
}

// seedCase builds the typed sides of one seed message v. want is the MessagePack value mpk's
// encoding must hold (checked through mpk's `any` decoder), exact the bytes it must equal when
// not nil; every MessagePack side must write mpk's bytes, and every side must give v back.
func seedCase[T any, PT genPtr[T], M any, PM genPtr[M]](id, title string, v PT, want any, exact []byte, pb Side) Case {
	enc, err := reflectEnc.Marshal(v)
	must(err)
	var tree any
	must(mpk.Unmarshal(enc, &tree))
	if !sameValue(want, tree) {
		panic(fmt.Sprintf("%s (typed): mpk's encoding %x does not hold the workload's value", id, enc))
	}
	if exact != nil && !bytes.Equal(enc, exact) {
		panic(fmt.Sprintf("%s (typed): mpk's encoding %x is not the workload's %x", id, enc, exact))
	}
	var twin M
	_, err = PM(&twin).UnmarshalMsg(enc)
	must(err)
	sides := []Side{
		{Name: "mpk", Marshal: func() ([]byte, error) { return reflectEnc.Marshal(v) },
			Unmarshal: func(d []byte) (any, error) { var x T; err := reflectDec.Unmarshal(d, &x); return &x, err }},
		{Name: "mpkgen", Marshal: func() ([]byte, error) { return v.MarshalMsg(nil) },
			Unmarshal: func(d []byte) (any, error) { var x T; _, err := PT(&x).UnmarshalMsg(d); return &x, err }},
		{Name: "msgp", Marshal: func() ([]byte, error) { return PM(&twin).MarshalMsg(nil) },
			Unmarshal: func(d []byte) (any, error) { var x M; _, err := PM(&x).UnmarshalMsg(d); return &x, err }},
		pb,
		{Name: "json", Copies: true, Marshal: func() ([]byte, error) { return json.Marshal(v) },
			Unmarshal: func(d []byte) (any, error) { var x T; err := json.Unmarshal(d, &x); return &x, err }},
	}
	wantJSON, err := json.Marshal(v)
	must(err)
	for i := range sides {
		s := &sides[i]
		out, err := s.Marshal()
		must(err)
		if s.Name != "protobuf" {
			// protobuf's input stays the workload's .pb (protoSide checked its round trip)
			s.Input = out
		}
		if s.Name != "protobuf" && s.Name != "json" && !bytes.Equal(out, enc) {
			panic(fmt.Sprintf("%s (typed)/%s: wrote %x, mpk wrote %x", id, s.Name, out, enc))
		}
		got, err := s.Unmarshal(s.Input)
		must(err)
		if !jsonEqual(toJSON(got), wantJSON) {
			panic(fmt.Sprintf("%s (typed)/%s: the round trip changed the value: %s", id, s.Name, toJSON(got)))
		}
		probeAliasing(s, nil)
	}
	return Case{Name: id, Title: title, Typed: true, Variant: "typed", Sides: sides}
}
