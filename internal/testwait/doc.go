// Package testwait is the tests' one wait for something another goroutine or process makes true:
// For polls a condition until it holds and fails the test, naming what it waited for, once a
// deadline passes. Tests wait on a condition, never for a fixed time.
package testwait
