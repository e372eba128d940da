// Package endpoints holds online and batch serving (designs 0014, issue 14): the endpoints'
// and deployments' verbs (online.go, deployments.go, batch.go, batchinvoke.go), the serving
// loop that keeps each deployment's replicas as serving.PlanReplicas says (loop.go), and the
// router's side (router.go): the loop publishes the router's table and the endpoints' keys
// itself, feeds the autoscaler the router's load, and replaces a replica that fails its
// liveness probe. Its dependencies are the small interfaces in deps.go: what it asks of the run
// core (Runs), of the workspace's resolver (Resolver) and of the store (Store).
package endpoints
