package gentest

import "mpk.dev/go/mpk"

// The reflection path, which the generated code is compared with: by default Marshal and
// Unmarshal would take the generated methods themselves.
var (
	reflectOnly   = mpk.EncodeOptions{IgnoreGenerated: true}
	reflectDecode = mpk.DecodeOptions{IgnoreGenerated: true}
)
