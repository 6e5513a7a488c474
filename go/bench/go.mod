module mpk.dev/go/bench

go 1.24

require mpk.dev/go/mpk v0.0.0

require (
	github.com/philhofer/fwd v1.2.0 // indirect
	github.com/shamaton/msgpack/v2 v2.4.0 // indirect
	github.com/tinylib/msgp v1.6.5 // indirect
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	golang.org/x/mod v0.18.0 // indirect
	golang.org/x/tools v0.22.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace mpk.dev/go/mpk => ../
