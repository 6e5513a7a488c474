//go:build race

package mpkrpc

// raceEnabled: the race detector is on. Its sync.Pool drops items at random, so mpk's pooled
// decode state (about 2.3 KiB) is allocated afresh for nearly every message: TotalAlloc then
// measures the pool, not the endpoint (TestHostileRPCMemory).
const raceEnabled = true
