require_relative "spec_helper"
require "tmpdir"
require "fileutils"

# `gem build` + `gem install --local` on a copy of ruby/ and c/ outside the repository, then the
# installed gem used from a clean environment: what a fresh machine does.
RSpec.describe "the gem", :subprocess do
  it "builds, installs with --local and works from the installed copy" do
    Dir.mktmpdir("mpk-gem") do |tmp|
      src = File.join(tmp, "ruby")
      FileUtils.mkdir_p(File.join(src, "ext", "mpk"))
      FileUtils.cp_r(File.join(SPEC_ROOT, "ruby", "lib"), src)
      Dir[File.join(SPEC_ROOT, "ruby", "ext", "mpk", "*.{c,h,rb}")].each { |f| FileUtils.cp(f, File.join(src, "ext", "mpk")) }
      %w[mpk.gemspec README.md].each { |f| FileUtils.cp(File.join(SPEC_ROOT, "ruby", f), src) }
      FileUtils.mkdir_p(File.join(tmp, "c"))
      FileUtils.cp_r(File.join(SPEC_ROOT, "c", "src"), File.join(tmp, "c"))
      FileUtils.cp_r(File.join(SPEC_ROOT, "c", "include"), File.join(tmp, "c"))
      log = IO.popen(["gem", "build", "mpk.gemspec", chdir: src, err: %i[child out]], &:read)
      expect($?).to be_success, log
      # the .gem carries the core's sources: install it with the repository copy gone
      FileUtils.rm_rf(File.join(tmp, "c"))
      gems = File.join(tmp, "gems")
      log = IO.popen([{ "MPK_OPTFLAGS" => "-O0" }, "gem", "install", "--local", "--no-document", "--install-dir", gems,
                      File.join(src, "mpk-#{MPK::VERSION}.gem"), err: %i[child out]], &:read)
      expect($?).to be_success, log
      env = { "GEM_HOME" => gems, "GEM_PATH" => gems, "RUBYOPT" => nil, "RUBYLIB" => nil }
      out = IO.popen([env, "ruby", "-e", <<~RUBY, chdir: tmp, err: %i[child out]], &:read)
        require "mpk"
        print [0, true, false, nil].to_msgpack.unpack1("H*"), " ", MPK.unpack("\\x92\\x01\\xa1a".b).inspect, " ",
              $LOADED_FEATURES.grep(/mpk\\.so/).first.start_with?(#{gems.inspect})
      RUBY
      expect(out).to eq('9400c3c2c0 [1, "a"] true')
    end
  end
end
