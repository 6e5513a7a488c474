package mpkrpc

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mpk.dev/go/mpk"
)

// corpusForms returns every encoding of every valid value of spec/vectors.
func corpusForms(t *testing.T) map[string][]byte {
	files, err := filepath.Glob("../../spec/vectors/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus (%v)", err)
	}
	forms := map[string][]byte{}
	for _, f := range files {
		var cases []map[string]json.RawMessage
		if err := readJSON(f, &cases); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for ci, c := range cases {
			if c["error"] != nil || c["msgpack"] == nil {
				continue
			}
			var name string
			_ = json.Unmarshal(c["name"], &name)
			var list []string
			if json.Unmarshal(c["msgpack"], &list) != nil {
				var one string
				if err := json.Unmarshal(c["msgpack"], &one); err != nil {
					t.Fatalf("%s %s: msgpack %s", f, name, c["msgpack"])
				}
				list = []string{one}
			}
			for i, h := range list {
				b, err := hex.DecodeString(strings.ReplaceAll(h, "-", ""))
				if err != nil {
					t.Fatalf("%s %s: %v", f, name, err)
				}
				forms[fmt.Sprintf("%s case %d %q form %d", filepath.Base(f), ci, name, i)] = b
			}
		}
	}
	return forms
}

// Every corpus value travels as an argument and comes back as a result with its bytes unchanged,
// all calls in flight at once.
func TestEndpointCorpusValues(t *testing.T) {
	forms := corpusForms(t)
	lim := mpk.Limits{Depth: mpk.MaxDepth, Str: 1<<32 - 1, Bin: 1<<32 - 1, Ext: 1<<32 - 1, Array: 1<<32 - 1, Map: 1<<32 - 1}
	opts := &Options{Limits: &lim}
	a, b := pair(t, opts, opts)
	b.Register("echo", func(v mpk.RawMessage) mpk.RawMessage { return v })
	ctx := ctxT(t)
	calls := map[string]*Pending{}
	for name, form := range forms {
		calls[name] = a.Go(ctx, "echo", mpk.RawMessage(form))
	}
	for name, p := range calls {
		var got mpk.RawMessage
		if err := p.Result(&got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, forms[name]) {
			t.Fatalf("%s: sent %x, got back %x", name, forms[name], []byte(got))
		}
	}
	t.Logf("%d encodings echoed", len(forms))
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	return d.Decode(v)
}
