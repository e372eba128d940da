// Package tokens is Hangar's one HMAC token mechanism: tokens derived from the workspace's token
// key (HMAC-SHA256, a domain per kind of token so that one kind never verifies as another),
// checked without being stored, so a server that restarted, or crashed between minting a token
// and saving what it was for, still accepts it. Three kinds, each with its own format and
// meaning:
//   - run tokens, "<run>.<attempt>.<expiry>.<mac>" (and "<run>.<mac>" from servers before
//     expiries): a supervisor acting for its run (what a token may do is controller.Admit's);
//   - join tokens, "hj1.<claims>.<mac>": a new cluster node's agent joining, until a deadline;
//   - agent tokens, "ha1.<node>.<mac>": a joined agent's heartbeats, while its node exists.
//
// Personal API tokens ("hpt_<64 hex>", personal.go) are the exception: random, stored hashed
// by the server, so that each can be revoked and expire on its own.
package tokens
