package bench

import "mpk.dev/go/mpk"

// FloorSide is the copy floor of an unmarshal of input (mpk's encoding of a case): its Unmarshal
// allocates and copies every string (string(b)) and bin (append to nil) of the document, map
// keys included, and nothing else: no containers, numbers or boxes. It is what any decoder that
// copies what it decodes must at least do with the document's bytes; cmd/faults and cmd/prof
// run it as the side "floor" beside the real ones (it is not a row of the report).
func FloorSide(input []byte) Side {
	var doc any
	must(mpk.Unmarshal(input, &doc))
	var strs, bins [][]byte
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			strs = append(strs, []byte(v))
		case []byte:
			bins = append(bins, v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for k, e := range v {
				strs = append(strs, []byte(k))
				walk(e)
			}
		case map[any]any:
			for k, e := range v {
				walk(k)
				walk(e)
			}
		}
	}
	walk(doc)
	return Side{Name: "floor", Input: input, Unmarshal: func([]byte) (any, error) {
		for _, b := range strs {
			floorStr = string(b)
		}
		for _, b := range bins {
			floorBin = append([]byte(nil), b...)
		}
		return nil, nil
	}}
}

// The floor's results go to package variables, so that the compiler keeps the copies.
var (
	floorStr string
	floorBin []byte
)

// FloorLast is the length of the last string and bin the floor copied (what keeps its copies
// observable).
func FloorLast() int { return len(floorStr) + len(floorBin) }

// FloorSides are what any marshal of a case costs at least: a new slice of the size of mpk's
// output (taken from the side named "mpk", else the first of sel) holding those bytes, made the
// two ways a codec can make it: floor-append appends them to a nil slice (one allocation of the
// exact size, only its tail past the bytes cleared), floor-make makes the slice (cleared when the
// allocator reuses memory) and copies into it. cmd/faults -floor and cmd/prof -side floor-append
// use them.
func FloorSides(sel []Side) []Side {
	ref := sel[0]
	for _, s := range sel {
		if s.Name == "mpk" {
			ref = s
		}
	}
	enc, err := ref.Marshal()
	if err != nil {
		panic(err)
	}
	return []Side{
		{Name: "floor-append", Marshal: func() ([]byte, error) { return append([]byte(nil), enc...), nil }},
		{Name: "floor-make", Marshal: func() ([]byte, error) {
			b := make([]byte, len(enc))
			copy(b, enc)
			return b, nil
		}},
	}
}
