import { brand } from "./brand.js";
/** The ext type MessagePack reserves for timestamps. */
export const TIMESTAMP_EXT_TYPE = -1;

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const MS_PER_SEC = 1000;
// ECMAScript Dates hold +-8.64e15 ms from the epoch (ECMA-262 "Time Values and Time Range").
const DATE_MAX_MS = 8.64e15;

/**
 * A MessagePack timestamp with its full range and precision: `sec` is a signed 64-bit count of
 * seconds from 1970-01-01T00:00:00Z and `nsec` the nanoseconds within it (0..999999999).
 * `Date` keeps only milliseconds and +-8.64e15 ms; use this class when that is not enough.
 */
export class Timestamp {
  readonly sec: bigint;
  readonly nsec: number;

  constructor(sec: bigint | number, nsec = 0) {
    const s = BigInt(sec);
    if (s < INT64_MIN || s > INT64_MAX) throw new RangeError("timestamp sec is outside int64");
    if (!Number.isInteger(nsec) || nsec < 0 || nsec > 999_999_999) {
      throw new RangeError("timestamp nsec must be an integer in 0..999999999");
    }
    this.sec = s;
    this.nsec = nsec;
  }

  static fromDate(date: Date): Timestamp {
    const ms = date.getTime();
    if (Number.isNaN(ms)) throw new RangeError("cannot encode an invalid Date");
    const sec = Math.floor(ms / MS_PER_SEC);
    return new Timestamp(sec, (ms - sec * MS_PER_SEC) * 1_000_000);
  }

  /** The Date at this instant, with the nanoseconds cut to milliseconds; null outside Date's range. */
  toDate(): Date | null {
    const ms = Number(this.sec) * MS_PER_SEC + Math.floor(this.nsec / 1_000_000);
    return Math.abs(ms) <= DATE_MAX_MS ? new Date(ms) : null;
  }
}

/** The shortest of timestamp 32 / 64 / 96 that holds (sec, nsec), as an ext payload. */
export function encodeTimestampPayload(sec: bigint, nsec: number): Uint8Array {
  if (nsec === 0 && sec >= 0n && sec < 0x1_0000_0000n) {
    const out = new Uint8Array(4);
    new DataView(out.buffer).setUint32(0, Number(sec));
    return out;
  }
  if (sec >= 0n && sec < 0x4_0000_0000n) {
    // timestamp 64: nsec in the upper 30 bits, sec in the lower 34
    const out = new Uint8Array(8);
    const view = new DataView(out.buffer);
    const s = Number(sec);
    view.setUint32(0, nsec * 4 + Math.floor(s / 0x1_0000_0000));
    view.setUint32(4, s >>> 0);
    return out;
  }
  const out = new Uint8Array(12);
  const view = new DataView(out.buffer);
  view.setUint32(0, nsec);
  view.setBigInt64(4, sec);
  return out;
}

/**
 * Reads a timestamp payload of 4, 8 or 12 bytes; returns null when the length is not one of
 * those or nsec is over 999999999 (the caller reports invalid_timestamp at the ext's head).
 */
export function decodeTimestampPayload(view: DataView, offset: number, length: number): Timestamp | null {
  if (length === 4) return new Timestamp(view.getUint32(offset), 0);
  if (length === 8) {
    const hi = view.getUint32(offset);
    const lo = view.getUint32(offset + 4);
    const nsec = hi >>> 2;
    if (nsec > 999_999_999) return null;
    return new Timestamp((hi & 3) * 0x1_0000_0000 + lo, nsec);
  }
  if (length === 12) {
    const nsec = view.getUint32(offset);
    if (nsec > 999_999_999) return null;
    return new Timestamp(view.getBigInt64(offset + 4), nsec);
  }
  return null;
}

brand(Timestamp, "Timestamp");
