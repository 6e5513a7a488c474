//go:build race

package mpk

// raceEnabled: the race detector is on; sync.Pool then drops items at random and allocation
// counts include its own, so tests that count a decode's allocations skip.
const raceEnabled = true
