// Timing for same-process A/B scripts on a busy machine (versus.mjs, ab-workloads.mjs): process CPU
// time (process.cpuUsage), not wall-clock, so the time this process waits for a core is not
// counted, which steadies the ratios a lot.

export let sink; // keeps each result alive so the call cannot be optimised away

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/**
 * Nanoseconds of CPU time per call of fn, over a window of at least windowMs. Calls are made in
 * batches between readings of the clock: `process.cpuUsage` itself costs about 0.3-0.5 µs, which
 * read after every call made a 100 ns encode look 5x slower and squeezed every ratio towards 1.
 * The batch grows until one takes about a twentieth of the window.
 */
export function timeWindow(fn, windowMs) {
  let n = 0;
  let batch = 1;
  const t0 = cpuMs();
  let t = t0;
  let last = t0;
  do {
    for (let i = 0; i < batch; i++) sink = fn();
    n += batch;
    t = cpuMs();
    if (t - last < windowMs / 20 && batch < 1 << 20) batch *= 2;
    last = t;
  } while (t - t0 < windowMs);
  return ((t - t0) * 1e6) / n;
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
