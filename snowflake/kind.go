package snowflake

import "github.com/idgenkit/idgen"

// Kinds of the preset layouts' schemes, for idgen.TypedID: a field, slice
// or map of idgen.TypedID[snowflake.Twitter] decodes from JSON, text and
// SQL with no preparation, into IDs == to the twitter preset's. A layout of
// your own gets a Kind the same way:
//
//	var orderScheme = snowflake.MustSchemeOf(orderLayout)
//
//	type Order struct{}
//
//	func (Order) Scheme() *idgen.Scheme { return orderScheme }
type (
	Default     struct{} // the default preset (the snowflake strategy without preset= or layout=)
	Twitter     struct{} // the twitter preset
	Discord     struct{} // the discord preset
	Instagram   struct{} // the instagram preset
	Sonyflake   struct{} // the sonyflake preset (the sonyflake strategy's IDs are of strategies.Sonyflake)
	Baidu       struct{} // the baidu preset
	Region      struct{} // the region preset, at its default epoch
	Simpleflake struct{} // the simpleflake preset
	JS53        struct{} // the js53 preset
)

var (
	defaultScheme     = presetScheme("default")
	twitterScheme     = presetScheme("twitter")
	discordScheme     = presetScheme("discord")
	instagramScheme   = presetScheme("instagram")
	sonyflakeScheme   = presetScheme("sonyflake")
	baiduScheme       = presetScheme("baidu")
	regionScheme      = presetScheme("region")
	simpleflakeScheme = presetScheme("simpleflake")
	js53Scheme        = presetScheme("js53")
)

func presetScheme(name string) *idgen.Scheme {
	l, err := Preset(name)
	if err != nil {
		panic(err)
	}
	return MustSchemeOf(l)
}

// Scheme returns the default preset's scheme.
func (Default) Scheme() *idgen.Scheme { return defaultScheme }

// Scheme returns the twitter preset's scheme.
func (Twitter) Scheme() *idgen.Scheme { return twitterScheme }

// Scheme returns the discord preset's scheme.
func (Discord) Scheme() *idgen.Scheme { return discordScheme }

// Scheme returns the instagram preset's scheme.
func (Instagram) Scheme() *idgen.Scheme { return instagramScheme }

// Scheme returns the sonyflake preset's scheme.
func (Sonyflake) Scheme() *idgen.Scheme { return sonyflakeScheme }

// Scheme returns the baidu preset's scheme.
func (Baidu) Scheme() *idgen.Scheme { return baiduScheme }

// Scheme returns the region preset's scheme, at its default epoch.
func (Region) Scheme() *idgen.Scheme { return regionScheme }

// Scheme returns the simpleflake preset's scheme.
func (Simpleflake) Scheme() *idgen.Scheme { return simpleflakeScheme }

// Scheme returns the js53 preset's scheme.
func (JS53) Scheme() *idgen.Scheme { return js53Scheme }

// MustSchemeOf is like SchemeOf but panics on an invalid layout. For
// package-level schemes, such as a Kind's.
func MustSchemeOf(l Layout) *idgen.Scheme {
	s, err := SchemeOf(l)
	if err != nil {
		panic(err)
	}
	return s
}
