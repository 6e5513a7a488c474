/** An ext value whose type has no decoder registered: the type (-128..127) and the payload. */
export class ExtData {
  constructor(
    readonly type: number,
    readonly data: Uint8Array,
  ) {}
}
