// Package cluster is the backend of managed clusters: runs are placed on nodes by the controller's scheduler and started by the nodes' agents; this package reads their state back and delivers cancels.
package cluster
