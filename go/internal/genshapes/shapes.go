// Package genshapes is a table of struct shapes for the differential test of mpkgen against
// reflection: every type here is generated (go:generate without -type, so generic types and
// types promoting through embedded pointers are skipped with a note), and the package builds.
package genshapes

import (
	"encoding/json"
	"math/big"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

//go:generate go run ../../cmd/mpkgen

// Inner is embedded by value and by pointer.
type Inner struct {
	A int    `msgpack:"a"`
	S string `msgpack:"s,omitempty"`
}

// EmbedPtr promotes Inner's fields through a pointer: reflection promotes them (and leaves
// them out when the pointer is nil); mpkgen skips the type rather than nest them.
type EmbedPtr struct {
	*Inner
	B int `msgpack:"b"`
}

// EmbedVal promotes Inner's fields.
type EmbedVal struct {
	Inner
	B int `msgpack:"b"`
}

type tieA struct {
	X int `msgpack:",omitempty"` // options only: not a tag name
}

type tieB struct {
	X int
}

// OptionsOnlyTie has two promoted X at one depth, neither named by a tag: both are dropped.
type OptionsOnlyTie struct {
	tieA
	tieB
	Y int
}

type tieC struct {
	X int `msgpack:"X"`
}

// TaggedTie: the tagged X wins.
type TaggedTie struct {
	tieB
	tieC
}

// Red encodes itself as a str.
type Red struct{ N int }

func (r Red) MarshalMsgpack() ([]byte, error) { return []byte("\xa3red"), nil }
func (r *Red) UnmarshalMsgpack(b []byte) error {
	if string(b) != "\xa3red" {
		r.N = -1
	}
	return nil
}

// MarshalerField holds a type that implements mpk.Marshaler.
type MarshalerField struct {
	C Red  `msgpack:"c"`
	P *Red `msgpack:"p"`
}

// Level is a text-encoded enum.
type Level int

func (l Level) MarshalText() ([]byte, error) { return []byte(strings.Repeat("!", int(l))), nil }
func (l *Level) UnmarshalText(b []byte) error {
	*l = Level(len(b))
	return nil
}

// Key is a text-encoded map key.
type Key string

func (k Key) MarshalText() ([]byte, error) { return []byte("k:" + string(k)), nil }
func (k *Key) UnmarshalText(b []byte) error {
	*k = Key(strings.TrimPrefix(string(b), "k:"))
	return nil
}

// OtherPackages has fields of other packages' types, which encode themselves.
type OtherPackages struct {
	U      url.URL
	PU     *url.URL
	Addr   netip.Addr
	Prefix netip.Prefix
	Int    *big.Int
	Dur    time.Duration
	Num    json.Number
	Raw    json.RawMessage
	When   time.Time
	Lvl    Level
	Lvls   []Level
	ByKey  map[Key]int
}

// Page is generic: skipped without -type.
type Page[T any] struct {
	Items []T
	Next  string
}

type inner struct {
	A int
	b int
}

// UnexportedEmbed promotes an unexported embedded type's exported field.
type UnexportedEmbed struct {
	inner
	B int
}

// Pointers has a pointer to a pointer and a recursive type.
type Pointers struct {
	PP   **int
	Node *Node
}

// Node refers to itself.
type Node struct {
	V    int
	Next *Node
	Kids []Node
}

// Keys has maps with keys that are not strings.
type Keys struct {
	Ints  map[int]string
	Addrs map[netip.Addr]int
	Bools map[bool]bool
}

// Zeroer has an IsZero method, which omitzero calls.
type Zeroer struct{ V int }

func (z Zeroer) IsZero() bool { return z.V == 42 }

// Tags covers every tag combination.
type Tags struct {
	Renamed   int        `msgpack:"renamed"`
	Empty     string     `msgpack:",omitempty"`
	Zero      int        `msgpack:",omitzero"`
	Both      []int      `msgpack:"both,omitempty,omitzero"`
	ZeroSlice []int      `msgpack:",omitzero"`
	Arr       [2]int     `msgpack:",omitempty"`
	ArrZero   [2]int     `msgpack:",omitzero"`
	Struct    Inner      `msgpack:",omitzero"`
	Custom    Zeroer     `msgpack:",omitzero"`
	PCustom   *Zeroer    `msgpack:",omitzero"`
	Time      time.Time  `msgpack:",omitzero"`
	PTime     *time.Time `msgpack:",omitempty"`
	Gone      int        `msgpack:"-"`
	Dash      int        `msgpack:"-,"`
	unexp     int
}

// VMArray is vmihailenco's struct-level as_array.
type VMArray struct {
	//lint:ignore U1000 read through reflection: the struct-level tag
	_msgpack struct{} `msgpack:",as_array"`
	X, Y     int
	S        string `msgpack:",omitempty"`
}

// VMOmit is vmihailenco's struct-level omitempty.
type VMOmit struct {
	//lint:ignore U1000 read through reflection: the struct-level tag
	_msgpack struct{} `msgpack:",omitempty"`
	A        int
	B        string
}

// BlankArray is mpk's asarray.
type BlankArray struct {
	_ struct{} `msgpack:",asarray"`
	A int
	B *Inner
}
