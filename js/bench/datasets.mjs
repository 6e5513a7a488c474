// The bench datasets as JSON text, by name: seeded generated documents shaped like the usual
// MessagePack benchmarks, plus the real corpora from ../shared/bench-data when that folder exists.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** mulberry32: a small seeded generator, so every run measures the same documents */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea commodo consequat".split(" ");

function words(r, n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(r() * WORDS.length)]);
  return out.join(" ");
}

/** records of short strings, like the podcast-feed "sample-large" */
function records() {
  const r = rng(1);
  const list = [];
  for (let i = 0; i < 500; i++) {
    list.push({
      _id: Math.floor(r() * 2 ** 48).toString(16).padStart(24, "0"),
      author: r() < 0.3 ? null : words(r, 2),
      created_at: new Date(1.4e12 + Math.floor(r() * 1e11)).toISOString(),
      description: words(r, 12),
      image: `https://example.com/${words(r, 1)}/${i}.jpg`,
      keywords: [words(r, 1), words(r, 1), words(r, 2)],
      language: r() < 0.8 ? "en" : "de",
      permalink: `http://${words(r, 1)}.example.org/`,
      published: r() < 0.9,
      title: words(r, 3),
      updated_at: new Date(1.5e12 + Math.floor(r() * 1e11)).toISOString(),
      url: `http://feeds.example.com/${i}`,
    });
  }
  return list;
}

/** a Twitter-API-like search result: statuses with nested user and entities, some non-ASCII text */
function twitterLike() {
  const r = rng(2);
  const statuses = [];
  const texts = ["RT @someone: ", "こんにちは ", "Grüße aus Köln ", "", "#news "];
  for (let i = 0; i < 100; i++) {
    const id = 505874924095815700 + i * 7919;
    statuses.push({
      metadata: { result_type: "recent", iso_language_code: r() < 0.5 ? "ja" : "en" },
      created_at: "Sun Aug 31 00:29:15 +0000 2014",
      id,
      id_str: String(id),
      text: texts[i % texts.length] + words(r, 14),
      source: '<a href="http://twitter.com/download/iphone" rel="nofollow">Twitter for iPhone</a>',
      truncated: false,
      in_reply_to_status_id: null,
      in_reply_to_user_id: r() < 0.3 ? Math.floor(r() * 1e9) : null,
      user: {
        id: Math.floor(r() * 3e9),
        id_str: "1186275104",
        name: words(r, 2),
        screen_name: words(r, 1) + i,
        location: r() < 0.5 ? "" : "東京",
        description: words(r, 10),
        url: null,
        entities: { description: { urls: [] } },
        protected: false,
        followers_count: Math.floor(r() * 10000),
        friends_count: Math.floor(r() * 1000),
        listed_count: 0,
        created_at: "Fri Feb 15 00:59:10 +0000 2013",
        favourites_count: Math.floor(r() * 5000),
        utc_offset: null,
        time_zone: null,
        geo_enabled: false,
        verified: false,
        statuses_count: Math.floor(r() * 20000),
        lang: "ja",
        profile_background_color: "C0DEED",
        profile_image_url: `http://pbs.twimg.com/profile_images/${i}/normal.jpeg`,
        default_profile: true,
        following: false,
      },
      geo: null,
      coordinates: null,
      place: null,
      retweet_count: Math.floor(r() * 100),
      favorite_count: Math.floor(r() * 100),
      entities: { hashtags: [], symbols: [], urls: [], user_mentions: [{ screen_name: "someone", name: "Some One", id: 12345, id_str: "12345", indices: [3, 11] }] },
      favorited: false,
      retweeted: false,
      lang: "ja",
    });
  }
  return { statuses, search_metadata: { completed_in: 0.087, max_id: 505874924095815700, query: "%E4%B8%80", count: 100 } };
}

function table() {
  const rows = [];
  for (let i = 0; i < 16; i++) rows.push(i % 2 ? ["world", 456, false] : ["hello", 123, true]);
  return rows;
}

function ints() {
  const r = rng(3);
  const out = new Array(1_000_000);
  for (let i = 0; i < out.length; i++) {
    const k = r();
    out[i] = k < 0.5 ? Math.floor(r() * 128) : k < 0.8 ? Math.floor(r() * 65536) : Math.floor((r() - 0.5) * 2 ** 32);
  }
  return out;
}

function product() {
  return {
    id: 191919191919,
    name: "Hoodie",
    description: "A warm hooded sweatshirt with a front pocket, in heavy cotton fleece.",
    price: 18900,
    colors: ["black", "grey", "navy", "forest green"],
  };
}

function geo() {
  const r = rng(4);
  const features = [];
  for (let f = 0; f < 20; f++) {
    const ring = [];
    for (let i = 0; i < 500; i++) ring.push([-73.9 + r() * 0.5, 40.5 + r() * 0.5]);
    features.push({ type: "Feature", properties: { name: words(r, 2), id: f }, geometry: { type: "Polygon", coordinates: [ring] } });
  }
  return { type: "FeatureCollection", features };
}

/** an array of ASCII strings of 0 to 4 KiB (lengths spread evenly) */
export function asciiStrings() {
  const r = rng(5);
  const out = [];
  for (let i = 0; i < 200; i++) {
    const n = Math.floor(r() * 4097);
    let s = "";
    while (s.length < n) s += WORDS[Math.floor(r() * WORDS.length)] + " ";
    out.push(s.slice(0, n));
  }
  return out;
}

/** an array of non-ASCII strings of 100 B to 16 KiB of UTF-8 (Latin, Greek, CJK, emoji mixed) */
function otherStrings() {
  const r = rng(6);
  const pieces = ["Grüße ", "καλημέρα ", "こんにちは ", "東京 ", "😀 ", "naïve ", "Ünïcödé "];
  const out = [];
  for (let i = 0; i < 100; i++) {
    const bytes = 100 + Math.floor(r() * (16384 - 100));
    let s = "";
    while (new TextEncoder().encode(s).length < bytes) s += pieces[Math.floor(r() * pieces.length)];
    out.push(s);
  }
  return out;
}

/** one string of 1 MiB (ASCII) */
function oneMiB() {
  const r = rng(7);
  let s = "";
  while (s.length < 1 << 20) s += WORDS[Math.floor(r() * WORDS.length)] + " ";
  return s.slice(0, 1 << 20);
}

/** a GeoJSON FeatureCollection of polygons of a few hundred points, each feature with a small properties map */
export function geoWithProperties() {
  const r = rng(8);
  const features = [];
  for (let f = 0; f < 40; f++) {
    const ring = [];
    const n = 200 + Math.floor(r() * 300);
    for (let i = 0; i < n; i++) ring.push([-73.9 + r() * 0.5, 40.5 + r() * 0.5]);
    ring.push(ring[0]);
    features.push({
      type: "Feature",
      id: f,
      properties: { name: words(r, 2), population: Math.floor(r() * 1e6), area_km2: Math.round(r() * 1e4) / 10, admin: r() < 0.5 ? "county" : "city", tags: [words(r, 1), words(r, 1)] },
      geometry: { type: "Polygon", coordinates: [ring] },
    });
  }
  return { type: "FeatureCollection", features };
}

/** [name, JSON text] pairs, generated ones first */
export function loadDatasets(repoRoot) {
  const sets = [
    ["records (500 short-string records)", JSON.stringify(records())],
    ["twitter-like (100 statuses)", JSON.stringify(twitterLike())],
    ["table (16 rows)", JSON.stringify(table())],
    ["1M ints", JSON.stringify(ints())],
    ["product", JSON.stringify(product())],
    ["geojson-like (10k points)", JSON.stringify(geo())],
    // issue 10's shapes; bins are {"$bin": length, "seed": n} (suite.mjs revive)
    ["ascii strings (0-4 KiB)", JSON.stringify(asciiStrings())],
    ["non-ascii strings (100 B-16 KiB)", JSON.stringify(otherStrings())],
    ["one 1 MiB string", JSON.stringify(oneMiB())],
    ["pb Test1 [1,2]", "[1,2]"],
    ["pb Test2 [-1,-2]", "[-1,-2]"],
    ["pb Test3 (8 KiB bin)", JSON.stringify({ $bin: 8192, seed: 3 })],
    ["pb Test4 [[1,2],[-1,-2],8 KiB bin]", JSON.stringify([[1, 2], [-1, -2], { $bin: 8192, seed: 4 }])],
    ["64 KiB bins (x16)", JSON.stringify(Array.from({ length: 16 }, (_, i) => ({ $bin: 65536, seed: 10 + i })))],
    ["geojson with properties", JSON.stringify(geoWithProperties())],
  ];
  const shared = join(repoRoot, "..", "shared", "bench-data");
  if (existsSync(shared)) {
    for (const f of ["twitter.json", "canada.json", "citm_catalog.json"]) {
      if (existsSync(join(shared, f))) sets.push([f, readFileSync(join(shared, f), "utf8")]);
    }
    const jsDir = join(shared, "js");
    if (existsSync(jsDir)) {
      for (const f of readdirSync(jsDir).filter((n) => n.endsWith(".json")).sort()) sets.push([`js/${f}`, readFileSync(join(jsDir, f), "utf8")]);
    }
  }
  return sets;
}
