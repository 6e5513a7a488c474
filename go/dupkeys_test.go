package mpk

import "testing"

// spec/README.md "Maps with duplicate keys": the LAST pair with a key wins when a map is decoded
// into a structure with unique keys.
func TestDuplicateKeysLastWins(t *testing.T) {
	data := []byte{0x83, 0xa1, 0x61, 0x01, 0xa1, 0x62, 0x05, 0xa1, 0x61, 0x02} // {"a": 1, "b": 5, "a": 2}
	var m map[string]any
	if err := Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || m["a"] != int64(2) || m["b"] != int64(5) {
		t.Fatalf("map[string]any = %v", m)
	}
	var v any
	if err := Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if a := v.(map[string]any)["a"]; a != int64(2) {
		t.Fatalf("any: a = %v", a)
	}
	var s struct {
		A int `msgpack:"a"`
		B int `msgpack:"b"`
	}
	if err := Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.A != 2 || s.B != 5 {
		t.Fatalf("struct = %+v", s)
	}
	var typed map[string]int
	if err := Unmarshal(data, &typed); err != nil || typed["a"] != 2 {
		t.Fatalf("map[string]int = %v, %v", typed, err)
	}
}
