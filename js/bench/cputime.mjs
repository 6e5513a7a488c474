// Timing for same-process A/B scripts on a busy machine (versus.mjs, ab-workloads.mjs): process CPU
// time (process.cpuUsage), not wall-clock, so the time this process waits for a core is not
// counted, which steadies the ratios a lot.

export let sink; // keeps each result alive so the call cannot be optimised away

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Nanoseconds of CPU time per call of fn, over a window of at least windowMs. */
export function timeWindow(fn, windowMs) {
  let n = 0;
  const t0 = cpuMs();
  let t;
  do {
    sink = fn();
    n++;
    t = cpuMs();
  } while (t - t0 < windowMs);
  return ((t - t0) * 1e6) / n;
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
