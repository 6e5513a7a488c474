//go:build !race

// The race detector makes sync.Pool drop values at random, so this file is left out of -race runs.

package gentest

import "testing"

// TestMarshalAllocatesOnce checks that MarshalMsg(nil) allocates only its result, through the
// scratch buffer (Order) and through exact sizing (Product).
func TestMarshalAllocatesOnce(t *testing.T) {
	o := &Order{Id: 7, Lines: []Item{{Sku: "a-1", Qty: 2}, {Sku: "b-22", Qty: 300}}, Ship: &Point{X: 1, Y: 2}, Note: "leave at the door"}
	p := &Product{Id: 191919191919, Name: "Trail shoe", Price: 18900, Colors: []string{"red", "blue"}}
	for _, v := range []marshaler{o, p} {
		v.MarshalMsg(nil) // the first call may fill the scratch pool
		if n := testing.AllocsPerRun(100, func() { v.MarshalMsg(nil) }); n != 1 {
			t.Errorf("%T: MarshalMsg(nil) makes %v allocations, want 1", v, n)
		}
	}
}
