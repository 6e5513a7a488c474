// The shared corpus (spec/vectors/*.json), one-shot: every listed form of a positive case decodes
// to its value, its value encodes to the shortest form, and every negative case fails with its
// error kind at its offset.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DecodeError, Decoder, encode } from "../src/index.js";
import { loadCorpus, type Case } from "./support/corpus.js";
import { parseJson } from "./support/losslessJson.js";
import { bytesToHex, encodeTyped, fromTyped, normalEqual, normalize, toCanonicalJson } from "./support/typed.js";

const cases = loadCorpus();

export function checkDecodes(c: Case, value: unknown, form: Uint8Array): void {
  const got = normalize(parseJson(toCanonicalJson(value)));
  const want = normalize(c.typed!);
  assert.ok(normalEqual(got, want), `${bytesToHex(form)} decoded to ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

test("the corpus is there and large", () => {
  assert.ok(cases.length >= 1000, `only ${cases.length} cases`);
});

const byFile = new Map<string, Case[]>();
for (const c of cases) byFile.set(c.file, [...(byFile.get(c.file) ?? []), c]);

for (const [file, list] of byFile) {
  describe(file, () => {
    for (const c of list) {
      test(c.name, () => {
        const decoder = new Decoder(c.options);
        if (c.encodeError) {
          // mpk must refuse the value, with the error the spec's kind names
          assert.deepEqual(encodeTyped(c.typed!), { error: c.error });
          return;
        }
        if (c.error !== undefined) {
          assert.throws(
            () => decoder.decode(c.forms[0]!),
            (e: unknown) => e instanceof DecodeError && e.kind === c.error && e.offset === c.offset,
            `want ${c.error} at ${c.offset}`,
          );
          return;
        }
        for (const form of c.forms) checkDecodes(c, decoder.decode(form), form);
        const encoded = bytesToHex(encode(fromTyped(c.typed!)));
        const allowed = c.type === "number" ? c.forms.map(bytesToHex) : [bytesToHex(c.forms[0]!)];
        assert.ok(allowed.includes(encoded), `encoded ${encoded}, want ${allowed.join(" or ")}`);
      });
    }
  });
}
