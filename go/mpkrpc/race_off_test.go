//go:build !race

package mpkrpc

const raceEnabled = false
