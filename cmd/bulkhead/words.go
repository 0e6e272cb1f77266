package main

import (
	"fmt"
	"strings"
)

// count writes n with its noun, singular for one: "1 configuration", "2 configurations". The
// plural is the noun with an s, which holds for every noun the CLI counts.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// wrap refills text (its lines joined, spaces collapsed) into lines of at most width characters
// after indent, breaking between words only: a word longer than the line has a line of its own.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	line := 0
	for _, w := range strings.Fields(text) {
		switch {
		case line == 0:
			b.WriteString(indent)
		case line+1+len(w) > width:
			b.WriteString("\n" + indent)
			line = 0
		default:
			b.WriteByte(' ')
			line++
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}
