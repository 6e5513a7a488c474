import type { Check } from "./unit.js";
export async function browserTests(_check: Check, _pageDir: string, _vectorsDir: string): Promise<void> {}
