module mpk.dev/go/mpk

go 1.23
