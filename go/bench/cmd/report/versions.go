package main

import "runtime/debug"

// debugBuildInfo is the versions of the modules the bench links (its peers).
func debugBuildInfo() (map[string]string, bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil, false
	}
	out := map[string]string{}
	for _, m := range bi.Deps {
		switch m.Path {
		case "github.com/vmihailenco/msgpack/v5", "github.com/tinylib/msgp", "github.com/shamaton/msgpack/v2", "google.golang.org/protobuf":
			out[m.Path] = m.Version
		}
	}
	return out, true
}
