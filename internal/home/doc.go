// Package home manages a local workspace directory (HANGAR_HOME): its layout, the local server's pid and address files, starting that server in the background, the checks that keep a server from starting over a lost or damaged database, and backup and restore.
package home
