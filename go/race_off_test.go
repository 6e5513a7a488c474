//go:build !race

package mpk

const raceEnabled = false
