# mpk.gemspec — `gem build mpk.gemspec` from ruby/ in the mpk repository, then
# `gem install --local mpk-<version>.gem`. The extension is compiled from the C core's sources
# (c/src, c/include); building the gem copies them from ../c into ext/mpk/vendor/c (ignored by
# git), so the .gem is self-contained and installs on a machine without the repository.
require_relative "lib/mpk/version"

here = File.expand_path(__dir__)
core = File.expand_path("../c", here)
vendor = File.join(here, "ext", "mpk", "vendor", "c")
if File.exist?(File.join(core, "include", "mpk.h"))
  require "fileutils"
  FileUtils.rm_rf(vendor)
  FileUtils.mkdir_p(File.join(vendor, "src"))
  FileUtils.mkdir_p(File.join(vendor, "include", "mpk"))
  Dir[File.join(core, "src", "*.{c,h}")].each { |f| FileUtils.cp(f, File.join(vendor, "src")) }
  FileUtils.cp(File.join(core, "include", "mpk.h"), File.join(vendor, "include"))
  Dir[File.join(core, "include", "mpk", "*.h")].each { |f| FileUtils.cp(f, File.join(vendor, "include", "mpk")) }
end

Gem::Specification.new do |s|
  s.name = "mpk"
  s.version = MPK::VERSION
  s.summary = "MessagePack for Ruby on mpk's C core, with the msgpack-ruby API"
  s.description = "A MessagePack codec for CRuby: Packer, Unpacker, Factory, ext types, Timestamp, " \
                  "limits and errors with the byte offset, built on mpk's C core."
  s.authors = ["mpk developers"]
  s.license = "MIT"
  s.required_ruby_version = ">= 3.0"
  s.extensions = ["ext/mpk/extconf.rb"]
  Dir.chdir(here) do
    s.files = Dir["lib/**/*.rb", "ext/mpk/*.{c,h,rb}", "ext/mpk/vendor/c/**/*.{c,h}", "README.md", "mpk.gemspec"]
  end
  s.require_paths = ["lib"]
end
