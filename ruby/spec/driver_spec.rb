require_relative "spec_helper"
require "open3"

# The interop driver (spec_support/driver.rb, run as spec/drivers/ruby): one answer line per
# request, bad requests answered and survived.
RSpec.describe "the interop driver", :subprocess do
  it "answers encodes, decodes, errors and bad requests line by line" do
    requests = [
      '{"encode": {"int": 256}}',
      '{"encode": {"timestamp": [0, 1000000000]}}',
      '{"encode": {"int": "18446744073709551616"}}',
      '{"decode": "92c1"}',
      '{"decode": "a3616263", "limits": {"str": 2}}',
      '{"decode": "a1ff", "strict_utf8": true}',
      '{"decode": "a1ff"}',
      '{"decode": "01", "limits": {"depth": "x"}}',
      "not json",
      '{"encode": {"bool": 1}}',
      '{"decode": "c0"}',
    ]
    lib = $LOAD_PATH.grep(/ruby\/(build\/)?lib\z/).flat_map { |d| ["-I", d] }
    out, status = Open3.capture2("ruby", *lib, File.join(SPEC_ROOT, "ruby", "spec_support", "driver.rb"),
                                 stdin_data: requests.join("\n") + "\n")
    expect(status).to be_success
    expect(out.lines.map { |l| JSON.parse(l) }).to eq([
      { "hex" => "cd0100" },
      { "error" => "invalid_timestamp" },
      { "error" => "bad_request" },
      { "error" => "truncated", "offset" => 0 },
      { "error" => "length_limit", "offset" => 0 },
      { "error" => "invalid_utf8", "offset" => 0 },
      { "value" => { "string_hex" => "ff" } },
      { "error" => "bad_request" },
      { "error" => "bad_request" },
      { "error" => "bad_request" },
      { "value" => { "nil" => nil } },
    ])
  end
end
