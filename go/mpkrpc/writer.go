package mpkrpc

import "fmt"

// The endpoint's writes: whole messages, in order, from any number of goroutines, gathered into
// few Write calls.
//
// A sender that finds nobody writing writes its message itself with one Write, at once: a lone
// call costs no hand-off and waits for no batch. Senders that come while a Write is in progress
// append their message to the queue (wq) and go on; the writing goroutine, when its Write
// returns, writes everything queued with one Write (a batch), and again while more is queued,
// then stops. A sender therefore never waits for another sender's Write unless it asks to (Notify,
// and the msgid-0 answer written before the reader closes the stream) or the queue holds more than
// maxQueued bytes (then it waits until its batch is written: the peer's reading speed limits the
// queue, as it limits a plain Write).
//
// Measured on the RPC bench (bench/rpc, Go, 64 calls of 8 KiB in flight; CPU profiles and system
// call counts of client and server): one Write per message made the write system calls the
// largest part of the endpoint's own CPU time on both sides; batching under a sync.Cond that every
// queued sender waited on cost each call a second park and wake-up (and every Broadcast woke the
// senders of the next batch too). Queued senders now wait for nothing: a call parks once, for its
// reply.
//
// A failed Write fails the calls whose requests were in it or queued behind it (with that error,
// wrapped), and every later write returns the same error: after a failed Write the stream cannot
// be trusted.

// maxQueued bounds the bytes queued behind a Write in progress before senders wait for their batch.
// 64 calls of 8 KiB take about 520 KiB.
var maxQueued = 4 << 20

// maxWriterBatches bounds the batches one sender writes for others before it hands the writing to
// a new goroutine and returns to its own work (a caller whose reply has come is not kept writing
// for others for ever).
const maxWriterBatches = 16

// write sends one whole message, b (copied if queued: the caller may reuse b at once). p is the
// call whose request b is (nil for a response or notification): if the batch holding b fails, p
// fails with the error. With wait, write returns only once b is written (or failed).
func (ep *Endpoint) write(b []byte, p *Pending, wait bool) error {
	ep.wmu.Lock()
	if ep.werr != nil {
		err := ep.werr
		ep.wmu.Unlock()
		return err
	}
	if err := ep.Err(); err != nil {
		ep.wmu.Unlock()
		return err
	}
	if ep.writing {
		ep.wq = append(ep.wq, b...)
		if p != nil {
			ep.wcalls = append(ep.wcalls, p)
		}
		if !wait && len(ep.wq) <= maxQueued {
			ep.wmu.Unlock()
			return nil
		}
		gen := ep.wgen
		ep.wwaiting++
		for ep.wdone < gen {
			ep.wcond.Wait()
		}
		ep.wwaiting--
		var err error
		if ep.werr != nil && gen >= ep.wfailed {
			err = ep.werr
		}
		ep.wmu.Unlock()
		return err
	}
	ep.writing = true
	ep.wmu.Unlock()
	_, err := ep.rwc.Write(b)
	if err != nil {
		ep.wmu.Lock()
		ep.werr, ep.wfailed = err, ep.wgen // what is queued now fails too
	} else {
		ep.wmu.Lock()
	}
	ep.drain(0)
	return err
}

// drain writes the queued batches until the queue is empty (wmu held on entry, released on
// return), then stops writing. It is the writing goroutine's; after maxWriterBatches it hands on to
// a new goroutine.
func (ep *Endpoint) drain(batches int) {
	var failed []*Pending
	for {
		if ep.werr != nil {
			if len(ep.wq) > 0 || len(ep.wcalls) > 0 {
				failed = append(failed, ep.wcalls...)
				ep.wq, ep.wcalls = nil, nil
				ep.wdone = ep.wgen
				ep.wgen++
			}
			break
		}
		if len(ep.wq) == 0 {
			break
		}
		if batches == maxWriterBatches {
			ep.wmu.Unlock()
			go func() {
				ep.wmu.Lock()
				ep.drain(0)
			}()
			return
		}
		batches++
		out, calls, gen := ep.wq, ep.wcalls, ep.wgen
		ep.wq, ep.wcalls = ep.wspare[:0], ep.wcspare[:0]
		ep.wspare, ep.wcspare = nil, nil
		ep.wgen++
		ep.wmu.Unlock()
		_, err := ep.rwc.Write(out)
		ep.wmu.Lock()
		ep.wdone = gen
		if err != nil {
			ep.werr, ep.wfailed = err, gen
			failed = append(failed, calls...)
		}
		if cap(out) <= pooledBufMax {
			ep.wspare = out[:0]
		}
		clear(calls)
		ep.wcspare = calls[:0]
		if ep.wwaiting > 0 {
			ep.wcond.Broadcast()
		}
	}
	if ep.wwaiting > 0 {
		ep.wcond.Broadcast()
	}
	ep.writing = false
	err := ep.werr
	ep.wmu.Unlock()
	for _, p := range failed {
		ep.failUnsent(p, err)
	}
	ep.poke() // Shutdown waits for the queue to be written
}

// failUnsent fails call p, whose request a failed Write did not send (or not whole). (Had p been
// cancelled, its id stays among the abandoned ones: nothing more can be written on this stream.)
func (ep *Endpoint) failUnsent(p *Pending, err error) {
	ep.mu.Lock()
	if ep.pending[p.MsgID] == p {
		delete(ep.pending, p.MsgID)
	}
	ep.mu.Unlock()
	p.finish(nil, nil, fmt.Errorf("mpkrpc: sending %s: %w", p.Method, err))
}

// writeIdle reports whether nothing is being written or queued.
func (ep *Endpoint) writeIdle() bool {
	ep.wmu.Lock()
	defer ep.wmu.Unlock()
	return !ep.writing && len(ep.wq) == 0
}
