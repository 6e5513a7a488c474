package mpk

import (
	"bytes"
	"sync"
	"unsafe"
)

// The gathered write: Marshal of an `any` tree whose bytes are mostly long strings and bins
// (an 8 KiB bin alone, an array of strings of 0-4 KiB) writes the small parts (heads, numbers,
// short strings) into a pooled scratch buffer and leaves the long strings and bins where they
// are; the result is then made by one bytes.Join of the pieces, which allocates it at its exact
// size without clearing it (bytes.Join uses the runtime's allocation without zeroing) and copies
// each piece once. The other ways each cost a second pass over the bytes: the buffered path
// (encodeState) writes the tree into the pooled buffer and copies that out, and a sized result
// (make([]byte, 0, n), as the small-tree path and shamaton do) is cleared before it is written.
// A string's piece is a []byte view of its bytes (unsafe.Slice of unsafe.StringData) that only
// bytes.Join reads; nothing writes through it, and the pooled state drops it before Marshal
// returns. When it is taken: loneGatherMin, marshalBulkArray and marshalSmallGathered; what was
// measured: go/bench/README.md, "Marshal cells below the bar".

// gatherMinPiece: a string or bin of at least this many bytes is a piece of its own, not copied
// into the scratch buffer (a piece costs bytes.Join about 80 instructions, callgrind: about what
// copying 1 KiB twice costs).
const gatherMinPiece = 1024

// gatherNodes and gatherDepth bound the walk; beyond them, or at a map or a type the walk does
// not know, the tree goes to the other paths.
const (
	gatherNodes = 8192
	gatherDepth = 8
)

// gatherMinTotal: a tree whose long strings and bins total less than this is not worth the
// pooled state and the pieces (see marshalSmallTree and marshalBulkArray).
const gatherMinTotal = 1024

type gatherState struct {
	head   []byte
	parts  [][]byte // the pieces so far: a part of head, then a long string or bin, and so on
	at     int      // where in head the next part starts
	budget int
	big    int // bytes in pieces
}

var gatherPool = sync.Pool{New: func() any { return &gatherState{head: make([]byte, 0, 1024)} }}

// marshalGathered returns the encoding of x by a gathered write, or false when the tree holds
// something the walk does not take (see gatherState.append) or its pieces total less than
// gatherMinTotal, for the caller's other paths.
func marshalGathered(x any) ([]byte, bool) {
	g := gatherPool.Get().(*gatherState)
	g.head, g.parts, g.at, g.budget, g.big = g.head[:0], g.parts[:0], 0, gatherNodes, 0
	var out []byte
	if g.append(x, 0) && g.big >= gatherMinTotal {
		out = g.join()
	}
	clear(g.parts) // the pool must not keep the caller's bytes alive
	if cap(g.head) > pooledBufferMax || cap(g.parts) > 2*bulkArrayTop+1 {
		g.head, g.parts = make([]byte, 0, 1024), nil
	}
	gatherPool.Put(g)
	return out, out != nil
}

// join is the result: the pieces and the rest of head, in one allocation.
func (g *gatherState) join() []byte {
	if g.at < len(g.head) {
		g.parts = append(g.parts, g.head[g.at:])
	}
	return bytes.Join(g.parts, nil)
}

// piece ends the current part of head and adds p after it. A part keeps pointing into head's
// array of the time: when head grows, the old array still holds those bytes.
func (g *gatherState) piece(p []byte) {
	g.parts = append(g.parts, g.head[g.at:], p)
	g.at = len(g.head)
	g.big += len(p)
}

// append writes x into the scratch buffer, and its long strings and bins as pieces.
func (g *gatherState) append(x any, depth int) bool {
	g.budget--
	if g.budget < 0 || depth > gatherDepth {
		return false
	}
	switch x := x.(type) {
	case string:
		if len(x) < gatherMinPiece {
			g.head = AppendString(g.head, x)
			return true
		}
		g.head = AppendStringHeader(g.head, len(x))
		g.piece(unsafe.Slice(unsafe.StringData(x), len(x)))
	case []byte:
		if x == nil {
			g.head = append(g.head, mNil)
		} else if len(x) < gatherMinPiece {
			g.head = AppendBytes(g.head, x)
		} else {
			g.head = AppendBytesHeader(g.head, len(x))
			g.piece(x)
		}
	case nil:
		g.head = append(g.head, mNil)
	case bool:
		g.head = AppendBool(g.head, x)
	case int64:
		g.head = AppendInt(g.head, x)
	case int:
		g.head = AppendInt(g.head, int64(x))
	case uint64:
		g.head = AppendUint(g.head, x)
	case float64:
		g.head = AppendFloat64(g.head, x)
	case []any:
		if x == nil {
			g.head = append(g.head, mNil)
			return true
		}
		g.head = AppendArrayHeader(g.head, uint32(len(x)))
		for _, e := range x {
			if !g.append(e, depth+1) {
				return false
			}
		}
	default:
		return false
	}
	return true
}

// smallPieces is the most pieces marshalSmallGathered takes.
const smallPieces = 4

// marshalSmallGathered is marshalGathered for an array of at most smallTreeTop elements, one of
// them a string or bin of loneGatherMin bytes or more (Test4, [[1,2],[-1,-2],bin 8 KiB]), with
// its head and pieces on the stack: no pool and no clearing of pooled pieces, and a walk that
// checks what smallTreeSize checks, so that there is no separate walk to size it. It returns
// false for a tree it does not take (more than smallTreeNodes nodes or smallPieces pieces,
// deeper than smallTreeDepth, a map, another type), for the small-tree path (smallTreeSize,
// appendSmallTree), which TestGatheredMarshal compares it with. Measured: see loneGatherMin.
func marshalSmallGathered(x []any) ([]byte, bool) {
	big := false
	for _, e := range x {
		if bulkGuess(e) >= loneGatherMin {
			big = true
			break
		}
	}
	if !big {
		return nil, false
	}
	var hb [64]byte
	c := smallCuts{budget: smallTreeNodes}
	head, ok := c.append(hb[:0], x, 0)
	if !ok {
		return nil, false
	}
	// (indexes, not appends, so that the arrays stay on the stack)
	var parts [2*smallPieces + 1][]byte
	at := 0
	for i := range c.n {
		parts[2*i], parts[2*i+1] = head[at:c.end[i]], c.p[i]
		at = c.end[i]
	}
	parts[2*c.n] = head[at:]
	return bytes.Join(parts[:2*c.n+1], nil), true
}

// smallCuts are the pieces of marshalSmallGathered: where each comes in head, and its bytes (the
// caller's). Head itself is passed and returned by value, so that its array stays on the stack.
type smallCuts struct {
	n      int
	budget int
	end    [smallPieces]int
	p      [smallPieces][]byte
}

// append is gatherState.append with smallTreeSize's bounds and at most smallPieces pieces.
func (c *smallCuts) append(head []byte, x any, depth int) ([]byte, bool) {
	c.budget--
	if c.budget < 0 || depth > smallTreeDepth {
		return head, false
	}
	var p []byte
	switch x := x.(type) {
	case string:
		if len(x) < gatherMinPiece {
			return AppendString(head, x), true
		}
		head = AppendStringHeader(head, len(x))
		p = unsafe.Slice(unsafe.StringData(x), len(x))
	case []byte:
		if x == nil {
			return append(head, mNil), true
		}
		if len(x) < gatherMinPiece {
			return AppendBytes(head, x), true
		}
		head = AppendBytesHeader(head, len(x))
		p = x
	case []any:
		if x == nil {
			return append(head, mNil), true
		}
		head = AppendArrayHeader(head, uint32(len(x)))
		for _, e := range x {
			var ok bool
			if head, ok = c.append(head, e, depth+1); !ok {
				return head, false
			}
		}
		return head, true
	case nil, bool, int64, int, uint64, float64:
		return appendSmallTree(head, x), true
	default:
		return head, false
	}
	if c.n == smallPieces {
		return head, false
	}
	c.end[c.n], c.p[c.n] = len(head), p
	c.n++
	return head, true
}
