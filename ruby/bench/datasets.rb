# The benchmark's datasets, shared by bench.rb (times) and icount.rb (callgrind instruction counts).
require "json"

BENCH_DATA = File.expand_path("../../../shared/bench-data", __dir__) unless defined?(BENCH_DATA)

# ------------------------------------------------------------------------------------------------
# Datasets: the ruby-serializers set the seed used, the nativejson-benchmark files when present
# (else generated look-alikes), and the Protocol Buffers comparison's Test1-Test4 messages.
# ------------------------------------------------------------------------------------------------

def rng_str(r, n, alphabet = ("a".."z").to_a + [" "])
  Array.new(n) { alphabet.sample(random: r) }.join
end

def tweet(r, i)
  { "created_at" => "Sun Aug 31 00:29:15 +0000 2014", "id" => 505_874_924_095_815_681 + i,
    "id_str" => (505_874_924_095_815_681 + i).to_s, "text" => rng_str(r, r.rand(20..140)),
    "source" => "<a href=\"https://mobile.twitter.com\" rel=\"nofollow\">Twitter Web App</a>",
    "truncated" => false, "in_reply_to_status_id" => nil,
    "user" => { "id" => r.rand(1..2**40), "name" => rng_str(r, 12), "screen_name" => rng_str(r, 10),
                "location" => rng_str(r, 15), "description" => rng_str(r, r.rand(0..160)),
                "followers_count" => r.rand(0..100_000), "friends_count" => r.rand(0..5000),
                "verified" => false, "profile_image_url" => "http://pbs.twimg.com/profile_images/#{r.rand(10**9)}/x.jpeg" },
    "entities" => { "hashtags" => [], "urls" => [], "user_mentions" => [{ "screen_name" => rng_str(r, 8), "id" => r.rand(2**31) }] },
    "retweet_count" => r.rand(0..1000), "favorite_count" => r.rand(0..1000), "favorited" => false,
    "retweeted" => false, "lang" => "en" }
end

def load_or_generate(name)
  path = File.join(BENCH_DATA, "#{name}.json")
  return [JSON.parse(File.read(path)), "file"] if File.exist?(path)
  r = Random.new(name.sum)
  value = case name
          when "twitter" then { "statuses" => Array.new(100) { |i| tweet(r, i) }, "search_metadata" => { "count" => 100 } }
          when "canada"
            rings = Array.new(480) { Array.new(r.rand(50..2000)) { [r.rand(-141.0..-52.0), r.rand(41.0..83.0)] } }
            { "type" => "FeatureCollection", "features" => [{ "type" => "Feature", "geometry" => { "type" => "Polygon", "coordinates" => rings } }] }
          else Array.new(10_000) { rng_str(r, [0, 3, 8, 12, 20, 40, 80].sample(random: r)) }
          end
  [value, "generated look-alike"]
end

def datasets
  r = Random.new(20_261_122)
  out = []
  out << ["Twitter API response (seed)", { "statuses" => Array.new(20) { |i| tweet(r, i) } }, "generated"]
  out << ["image record (seed)", { "id" => 42, "name" => "photo.jpg", "width" => 640, "height" => 480,
                                  "tags" => %w[cat sofa], "created" => 1_700_000_000, "data" => r.bytes(6 * 1024) }, "generated"]
  out << ["integer array (seed)", Array.new(10_000) { r.rand(-2**31..2**31) }, "generated"]
  out << ["GeoJSON (seed)", { "type" => "FeatureCollection", "features" => Array.new(50) do |i|
    { "type" => "Feature", "properties" => { "name" => "f#{i}", "pop" => r.rand(10**6) },
      "geometry" => { "type" => "Polygon", "coordinates" => [Array.new(20) { [r.rand * 360 - 180, r.rand * 180 - 90] }] } }
  end }, "generated"]
  out << ["3D model (seed)", { "name" => "mesh", "vertices" => Array.new(3 * 5000) { r.rand * 100 - 50 },
                               "normals" => Array.new(3 * 5000) { r.rand * 2 - 1 }, "faces" => Array.new(3 * 9000) { r.rand(5000) } }, "generated"]
  %w[twitter citm_catalog canada].each do |name|
    value, source = load_or_generate(name)
    out << ["#{name}.json", value, source]
  end
  out << ["Test1 {a: 150}", { "a" => 150 }, "protobuf comparison"]
  out << ["Test2 {b: \"testing\"}", { "b" => "testing" }, "protobuf comparison"]
  out << ["Test3 {c: {a: 150}}", { "c" => { "a" => 150 } }, "protobuf comparison"]
  out << ["Test4 {d: [3, 270, 86942]}", { "d" => [3, 270, 86_942] }, "protobuf comparison"]
  out
end

