// Package pattern holds regular expressions compiled on first use. Every process of the hangar
// binary (each run's supervisor included) would otherwise compile every package's patterns at
// start, whether it validates anything or not: bounded repetitions such as {0,254} made that
// several milliseconds of CPU per process.
package pattern

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled the first time it is used.
type Regexp struct {
	re func() *regexp.Regexp
}

// New returns src as a Regexp; like regexp.MustCompile, a bad src panics (on first use).
func New(src string) *Regexp {
	return &Regexp{re: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(src) })}
}

// MatchString reports whether s contains a match.
func (p *Regexp) MatchString(s string) bool { return p.re().MatchString(s) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (p *Regexp) FindStringSubmatch(s string) []string { return p.re().FindStringSubmatch(s) }

// FindAllStringSubmatch is regexp.Regexp.FindAllStringSubmatch.
func (p *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return p.re().FindAllStringSubmatch(s, n)
}

// String returns the source text.
func (p *Regexp) String() string { return p.re().String() }
