package bench

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
