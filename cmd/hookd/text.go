package main

import "strings"

// joinOr joins items with ", ", or returns none when there are none.
func joinOr(items []string, none string) string {
	if len(items) == 0 {
		return none
	}
	return strings.Join(items, ", ")
}
