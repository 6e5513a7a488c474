# Builds mpk's Ruby extension from ext/mpk/*.c and the C core's sources (c/src/*.c).
# In the repository the core is ../../../c (beside ruby/); an installed gem carries a copy in
# ext/mpk/vendor/c, put there by mpk.gemspec when the gem is built.
require "mkmf"

here = File.expand_path(__dir__)
core = [File.expand_path("../../../c", here), File.join(here, "vendor", "c")].find do |dir|
  File.exist?(File.join(dir, "include", "mpk.h")) && !Dir[File.join(dir, "src", "*.c")].empty?
end
abort "mpk: the C core's sources were found neither at ../../../c nor in ext/mpk/vendor/c" unless core

core_src = File.join(core, "src")
$INCFLAGS << " -I#{File.join(core, 'include')} -I#{core_src}"
$VPATH << core_src
$srcs = Dir[File.join(here, "*.c")].map { |f| File.basename(f) } +
        Dir[File.join(core_src, "*.c")].map { |f| File.basename(f) }
# MPK_OPTFLAGS replaces -O3 (ruby/spec/gem_spec.rb builds with -O0: it checks the install, not speed)
$CFLAGS << " #{ENV.fetch('MPK_OPTFLAGS', '-O3')} -std=gnu11 -fvisibility=hidden -Wall -Wno-unused-parameter"
have_func("rb_enc_interned_str", "ruby/encoding.h") or abort "mpk needs Ruby 3.0 or later"
# CRuby's own constructor of a Hash at its final size (what `{k => v, ...}` literals use): exported
# by libruby 3.0-3.1 though not declared in its public headers (3.2 adds rb_hash_new_capa); the
# extension declares it itself when it links (see hash_presize in rb_mpk.c)
have_func("rb_hash_new_with_size")
create_makefile("mpk/mpk")
