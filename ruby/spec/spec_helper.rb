# Shared by every spec: loads mpk from ruby/lib and ruby/build/lib, and prints the closing
# "ruby: N passed, M failed" line that tools/suite.py reads.
require "mpk"
require "json"

SPEC_ROOT = File.expand_path("../..", __dir__) # the repository
VECTORS = File.join(SPEC_ROOT, "spec", "vectors")

class MPKSpecCount
  RSpec::Core::Formatters.register self, :dump_summary

  def initialize(output)
    @output = output
  end

  def dump_summary(summary)
    failed = summary.failure_count + summary.errors_outside_of_examples_count
    passed = summary.example_count - summary.failure_count - summary.pending_count
    @output.puts "ruby: #{passed} passed, #{failed} failed"
  end
end

# Runs a block of Ruby in a child process with its address space capped (ulimit -v, in KiB) and
# returns [stdout, exit status].
def run_capped(code, kib)
  script = "require 'mpk'\n#{code}"
  out = IO.popen(["sh", "-c", "ulimit -v #{kib} && exec ruby -I #{$LOAD_PATH.grep(/ruby\/(build\/)?lib\z/).join(' -I ')} -e \"$0\"", script],
                 err: [:child, :out], &:read)
  [out, $?]
end

RSpec.configure do |c|
  c.expect_with(:rspec) { |e| e.syntax = :expect }
  c.order = :defined
end
