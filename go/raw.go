package mpk

// RawMessage is one whole encoded MessagePack value. Marshal copies it into the output as it is
// (an empty RawMessage is written as nil); Unmarshal stores a copy of the value's bytes in it,
// after checking them, so decoding can be put off or done by other code.
type RawMessage []byte

// Unmarshaler is implemented by types that decode themselves. UnmarshalMsgpack receives one whole
// MessagePack value, already checked; it must copy the bytes if it keeps them.
type Unmarshaler interface {
	UnmarshalMsgpack(data []byte) error
}
