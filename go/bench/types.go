// Package bench compares mpk with other MessagePack libraries, Protocol Buffers and
// encoding/json on the same values. It is a separate module so that the library keeps no
// dependencies; run it with `make bench-go` (see run.sh).
package bench

import (
	"fmt"
	"net/netip"
)

//go:generate go run mpk.dev/go/mpk/cmd/mpkgen -type Product,Tweet,User,Entities,Hashtag,Mention,URL,Test1,Test2,Test3,Test4

// Product is the seed's struct: the one served over HTTP in the seed's comparison.
type Product struct {
	Id          int64    `msgpack:"id" json:"id"`
	Name        string   `msgpack:"name" json:"name"`
	Description string   `msgpack:"description" json:"description"`
	Price       int32    `msgpack:"price" json:"price"`
	Colors      []string `msgpack:"colors" json:"colors"`
}

// Test1-Test4 are the C++ seed's messages (bench/workloads/seed.proto) as Go structs, each
// written as a MessagePack array of its fields in order (asarray), as msgpack-c's MSGPACK_DEFINE
// writes them: Test1 is [1, 2], the bytes of the common workload test1. Test3 is [bin], one byte
// more than the workload's bare bin, as in the C++ bench's typed rows.
type Test1 struct {
	_ struct{} `msgpack:",asarray"`
	A uint32   `msgpack:"a" json:"a"`
	B uint32   `msgpack:"b" json:"b"`
}

type Test2 struct {
	_ struct{} `msgpack:",asarray"`
	A int32    `msgpack:"a" json:"a"`
	B int32    `msgpack:"b" json:"b"`
}

type Test3 struct {
	_    struct{} `msgpack:",asarray"`
	Data []byte   `msgpack:"data" json:"data"`
}

type Test4 struct {
	_     struct{} `msgpack:",asarray"`
	Test1 Test1    `msgpack:"test1" json:"test1"`
	Test2 Test2    `msgpack:"test2" json:"test2"`
	Test3 Test3    `msgpack:"test3" json:"test3"`
}

// Tweet is shaped like a status of the Twitter API (a subset of its fields).
type Tweet struct {
	CreatedAt         string   `msgpack:"created_at" json:"created_at"`
	Id                int64    `msgpack:"id" json:"id"`
	IdStr             string   `msgpack:"id_str" json:"id_str"`
	Text              string   `msgpack:"text" json:"text"`
	Source            string   `msgpack:"source" json:"source"`
	Truncated         bool     `msgpack:"truncated" json:"truncated"`
	InReplyToStatusId int64    `msgpack:"in_reply_to_status_id" json:"in_reply_to_status_id"`
	User              User     `msgpack:"user" json:"user"`
	RetweetCount      int64    `msgpack:"retweet_count" json:"retweet_count"`
	FavoriteCount     int64    `msgpack:"favorite_count" json:"favorite_count"`
	Favorited         bool     `msgpack:"favorited" json:"favorited"`
	Retweeted         bool     `msgpack:"retweeted" json:"retweeted"`
	Lang              string   `msgpack:"lang" json:"lang"`
	Entities          Entities `msgpack:"entities" json:"entities"`
}

type User struct {
	Id              int64  `msgpack:"id" json:"id"`
	IdStr           string `msgpack:"id_str" json:"id_str"`
	Name            string `msgpack:"name" json:"name"`
	ScreenName      string `msgpack:"screen_name" json:"screen_name"`
	Location        string `msgpack:"location" json:"location"`
	Description     string `msgpack:"description" json:"description"`
	Url             string `msgpack:"url" json:"url"`
	Protected       bool   `msgpack:"protected" json:"protected"`
	FollowersCount  int64  `msgpack:"followers_count" json:"followers_count"`
	FriendsCount    int64  `msgpack:"friends_count" json:"friends_count"`
	ListedCount     int64  `msgpack:"listed_count" json:"listed_count"`
	CreatedAt       string `msgpack:"created_at" json:"created_at"`
	FavouritesCount int64  `msgpack:"favourites_count" json:"favourites_count"`
	Verified        bool   `msgpack:"verified" json:"verified"`
	StatusesCount   int64  `msgpack:"statuses_count" json:"statuses_count"`
	Lang            string `msgpack:"lang" json:"lang"`
}

type Entities struct {
	Hashtags     []Hashtag `msgpack:"hashtags" json:"hashtags"`
	UserMentions []Mention `msgpack:"user_mentions" json:"user_mentions"`
	Urls         []URL     `msgpack:"urls" json:"urls"`
}

type Hashtag struct {
	Text    string  `msgpack:"text" json:"text"`
	Indices []int64 `msgpack:"indices" json:"indices"`
}

type Mention struct {
	ScreenName string  `msgpack:"screen_name" json:"screen_name"`
	Name       string  `msgpack:"name" json:"name"`
	Id         int64   `msgpack:"id" json:"id"`
	Indices    []int64 `msgpack:"indices" json:"indices"`
}

type URL struct {
	Url         string  `msgpack:"url" json:"url"`
	ExpandedUrl string  `msgpack:"expanded_url" json:"expanded_url"`
	DisplayUrl  string  `msgpack:"display_url" json:"display_url"`
	Indices     []int64 `msgpack:"indices" json:"indices"`
}

// Endpoint has fields whose types implement encoding.TextMarshaler (netip.Addr and netip.Prefix
// also implement BinaryMarshaler; Level only TextMarshaler): the row of issue 11 for types with
// TextMarshaler fields.
type Endpoint struct {
	Name  string       `msgpack:"name" json:"name"`
	Addr  netip.Addr   `msgpack:"addr" json:"addr"`
	Net   netip.Prefix `msgpack:"net" json:"net"`
	Level Level        `msgpack:"level" json:"level"`
}

// Level is a log level written as its name.
type Level int

var levelNames = []string{"debug", "info", "warn", "error"}

func (l Level) MarshalText() ([]byte, error) {
	if l < 0 || int(l) >= len(levelNames) {
		return nil, fmt.Errorf("level %d out of range", int(l))
	}
	return []byte(levelNames[l]), nil
}

func (l *Level) UnmarshalText(b []byte) error {
	for i, n := range levelNames {
		if n == string(b) {
			*l = Level(i)
			return nil
		}
	}
	return fmt.Errorf("unknown level %q", b)
}
