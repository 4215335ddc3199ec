// Package numfmt writes numbers for people: 1234567 as "1,234,567", as
// golang.org/x/text's English printer does, without linking it.
package numfmt

import "strconv"

// Thousands returns v in decimal with a comma between each group of three
// digits: 1234567 -> "1,234,567".
func Thousands(v uint64) string {
	s := strconv.FormatUint(v, 10)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
