// Package home manages a local workspace directory (HANGAR_HOME): its layout, the local server's pid and address files, and starting that server in the background.
package home
