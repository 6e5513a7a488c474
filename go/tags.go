package mpk

import "strings"

// tagOptions is the part of a struct tag after the name: "omitempty,omitzero", "asarray".
type tagOptions string

// parseTag splits a struct tag into its name and its options.
func parseTag(tag string) (string, tagOptions) {
	name, opts, _ := strings.Cut(tag, ",")
	return name, tagOptions(opts)
}

// Contains reports whether the comma-separated options hold name.
func (o tagOptions) Contains(name string) bool {
	s := string(o)
	for s != "" {
		var opt string
		opt, s, _ = strings.Cut(s, ",")
		if opt == name {
			return true
		}
	}
	return false
}
