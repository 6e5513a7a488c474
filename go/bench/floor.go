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
