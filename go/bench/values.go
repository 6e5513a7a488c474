package bench

import (
	"fmt"
	"net/netip"
)

// SampleProduct has the seed's id and price; the name, description and colors are ours, chosen
// to look like a real catalogue entry.
func SampleProduct() Product {
	return Product{
		Id:          191919191919,
		Name:        "Men's Trail Running Shoe",
		Description: "Lightweight trail running shoe with a breathable mesh upper and a grippy rubber outsole.",
		Price:       18900,
		Colors:      []string{"Black", "Forest Green", "Slate Blue"},
	}
}

// SampleTweet is a made-up status with the field sizes of a typical one.
func SampleTweet() Tweet {
	return Tweet{
		CreatedAt:         "Sun Nov 22 21:14:07 +0000 2026",
		Id:                1862651926283452416,
		IdStr:             "1862651926283452416",
		Text:              "Trail season is here: new shoes, same mud. Who's running the ridge loop on Saturday? #trailrunning #weekend https://t.co/x7Qm2LrA9b",
		Source:            "<a href=\"https://mobile.twitter.com\" rel=\"nofollow\">Twitter Web App</a>",
		InReplyToStatusId: 0,
		User: User{
			Id:              783214,
			IdStr:           "783214",
			Name:            "Ridge Runners Club",
			ScreenName:      "ridgerunners",
			Location:        "Boulder, CO",
			Description:     "Weekly group runs, race reports and the occasional muddy selfie. Everyone welcome.",
			Url:             "https://t.co/abc123XYZ",
			FollowersCount:  48213,
			FriendsCount:    612,
			ListedCount:     301,
			CreatedAt:       "Tue Feb 20 14:35:54 +0000 2007",
			FavouritesCount: 15322,
			Verified:        false,
			StatusesCount:   20871,
			Lang:            "en",
		},
		RetweetCount:  27,
		FavoriteCount: 214,
		Lang:          "en",
		Entities: Entities{
			Hashtags:     []Hashtag{{Text: "trailrunning", Indices: []int64{86, 99}}, {Text: "weekend", Indices: []int64{100, 108}}},
			UserMentions: []Mention{{ScreenName: "bouldertrails", Name: "Boulder Trails", Id: 1423567, Indices: []int64{0, 14}}},
			Urls:         []URL{{Url: "https://t.co/x7Qm2LrA9b", ExpandedUrl: "https://ridgerunners.example/loop", DisplayUrl: "ridgerunners.example/loop", Indices: []int64{109, 132}}},
		},
	}
}

// SampleEndpoints are 16 endpoints with TextMarshaler fields.
func SampleEndpoints() []Endpoint {
	out := make([]Endpoint, 16)
	for i := range out {
		out[i] = Endpoint{
			Name:  fmt.Sprintf("node-%02d", i),
			Addr:  netip.AddrFrom4([4]byte{10, 0, byte(i), byte(1 + i)}),
			Net:   netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i), 0, 0}), 16),
			Level: Level(i % 4),
		}
		if i%4 == 3 {
			out[i].Addr = netip.MustParseAddr(fmt.Sprintf("2001:db8::%x", i))
		}
	}
	return out
}
