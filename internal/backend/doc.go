// Package backend is the small contract between the controller and the places runs execute: submit, status, cancel.
package backend
