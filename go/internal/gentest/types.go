// Package gentest holds struct types whose methods mpkgen writes (mpk_gen.go), to test the
// generated code against the reflection path.
package gentest

import "time"

//go:generate go run ../../cmd/mpkgen -type Product,Mixed,Item,Point,Base,Tree,Order,Pages,Page4k,Book

// Product is the seed's struct.
type Product struct {
	Id          int64
	Name        string
	Description string
	Price       int32
	Colors      []string
}

type Color string

type Base struct {
	Created time.Time `msgpack:"created"`
	Note    string    `msgpack:"note,omitempty"`
}

// Mixed has a field of every kind the generator handles, and some it hands to reflection.
type Mixed struct {
	Base
	B      bool
	I8     int8
	I16    int16
	I32    int32
	I      int
	U8     uint8
	U16    uint16
	U32    uint32
	U64    uint64
	U      uint
	F32    float32
	F64    float64
	S      string
	C      Color `msgpack:"color"`
	Raw    []byte
	Fixed  [4]byte
	Tags   []string
	Items  []Item
	Ptr    *Item
	Counts map[string]int64
	Named  map[Color]Point
	Any    any
	Omit   int  `msgpack:",omitempty"`
	Gone   bool `msgpack:"-"`
	Nested [][]int16
}

type Item struct {
	Sku string `msgpack:"sku"`
	Qty uint16 `msgpack:"qty,omitempty"`
}

type Point struct {
	_ struct{} `msgpack:",asarray"`
	X float64
	Y float64
}

// Tree holds itself, so that a message can nest its generated structs as deep as the depth limit.
type Tree struct {
	Name   string          `msgpack:"name"`
	Kids   []Tree          `msgpack:"kids"`
	Next   *Tree           `msgpack:"next"`
	ByName map[string]Tree `msgpack:"by_name"`
	Leaf   Point           `msgpack:"leaf"`
}

// Order nests generated structs without maps or reflection: MarshalMsg(nil) writes it into an
// mpk.Scratch and allocates only the result.
type Order struct {
	Id    int64  `msgpack:"id"`
	Lines []Item `msgpack:"lines"`
	Ship  *Point `msgpack:"ship"`
	Note  string `msgpack:"note"`
}

// Pages holds large elements, which a hostile count of nils or empty maps would multiply.
type Pages struct {
	P []Page4k          `msgpack:"p"`
	Q []*Page4k         `msgpack:"q"`
	M map[string]Page4k `msgpack:"m"`
	R map[int]*Page4k   `msgpack:"r"` // decoded by reflection (an int key)
}

// Book nests Pages, whose R fields the generated code hands to reflection.
type Book struct {
	Pages []Pages `msgpack:"pages"`
}

type Page4k struct {
	B [4096]byte `msgpack:"b"`
}
