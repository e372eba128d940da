// Package tick holds the shape of the periodic loops of the server, the supervisor and the
// agents: work done at once and then every interval, or whenever kicked, until a context ends;
// work done every interval until told to stop; the kick that wakes a loop without blocking the
// one who kicks it; and the per-key wake-up a long poll waits on.
package tick
