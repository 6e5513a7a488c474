# Found by `require "msgpack"` after `require "mpk/msgpack"` (which puts this directory first on
# $LOAD_PATH): MessagePack is MPK already, so the msgpack gem must not load on top of it.
require "mpk/msgpack"
