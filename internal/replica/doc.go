// Package replica lets several servers serve one workspace on one PostgreSQL database (design
// 0020). Every server records itself in the database and tries for the leader lock (a session
// advisory lock, store.TryLead); the one holding it leads: it runs the controller, the
// schedulers, the managed clusters' dispatcher and the endpoints' router, and serves the API.
// The others follow: they answer a health check themselves and forward every other request to
// the leader, with the caller's address vouched for by a key only servers of the workspace hold.
// When the leader dies its lock goes with its database session and a follower takes it.
//
// The decisions (which server leads as recorded, which addresses nodes are given) are pure
// functions of the records and a clock (pick.go); the loop, the lock and the forwarding are the
// side effects.
package replica
