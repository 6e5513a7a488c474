// A JSON parser that keeps what JSON.parse throws away and the typed-value notation needs: the
// text of every number (1 and 1.0 differ; integers beyond 2^53 stay exact) and the order and
// duplicates of object members.

export class JsonNumber {
  constructor(readonly text: string) {}
  /** True when the number is written without a fraction or exponent. */
  get isInteger(): boolean {
    return !/[.eE]/.test(this.text);
  }
  get value(): number {
    return Number(this.text);
  }
}

export class JsonObject {
  constructor(readonly entries: Array<[string, Json]>) {}
}

export type Json = null | boolean | string | JsonNumber | Json[] | JsonObject;

export function parseJson(text: string): Json {
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  };
  const fail = (): never => {
    throw new SyntaxError(`bad JSON at ${i}`);
  };
  const value = (): Json => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const entries: Array<[string, Json]> = [];
      ws();
      if (text[i] === "}") {
        i++;
        return new JsonObject(entries);
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        const key = str();
        ws();
        if (text[i++] !== ":") fail();
        entries.push([key, value()]);
        ws();
        const sep = text[i++];
        if (sep === "}") return new JsonObject(entries);
        if (sep !== ",") fail();
      }
    }
    if (c === "[") {
      i++;
      const items: Json[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return items;
      }
      for (;;) {
        items.push(value());
        ws();
        const sep = text[i++];
        if (sep === "]") return items;
        if (sep !== ",") fail();
      }
    }
    if (c === '"') return str();
    if (text.startsWith("true", i)) return (i += 4), true;
    if (text.startsWith("false", i)) return (i += 5), false;
    if (text.startsWith("null", i)) return (i += 4), null;
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) return fail();
    i += m[0].length;
    return new JsonNumber(m[0]);
  };
  const str = (): string => {
    // find the closing quote, then let JSON.parse handle the escapes
    let j = i + 1;
    while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
    if (j >= text.length) fail();
    const s = JSON.parse(text.slice(i, j + 1)) as string;
    i = j + 1;
    return s;
  };
  const out = value();
  ws();
  if (i !== text.length) fail();
  return out;
}
