package cli

import (
	"slices"

	"github.com/spf13/cobra"
)

// computeCreateFields are az ml compute create's flags for a target's fields (with no file, or
// over one).
var computeCreateFields = slices.Concat([]flagField{
	{flag: "type", short: "t", field: "type", help: "the target's type with no --file: amlcompute (a cluster), computeinstance, local, serverless"},
	{flag: "size", field: "size", help: "VM size of a cluster's nodes or an instance, e.g. Standard_DS3_v2 (hangar compute list-sizes)"},
}, clusterScaleFields, []flagField{
	{flag: "tier", field: "tier", help: "a cluster's tier: dedicated or low_priority"},
	descriptionField,
	{flag: "location", field: "location", help: "kept, no effect"},
	{flag: "admin-username", field: "ssh_settings.admin_username", help: "SSH user of a cluster's nodes (kept)"},
	{flag: "admin-password", field: "ssh_settings.admin_password", help: "SSH password of a cluster's nodes (sealed, kept)"},
	{flag: "ssh-key-value", field: "ssh_settings.ssh_key_value", help: "SSH public key (an instance's connect-ssh)"},
	{flag: "ssh-public-access-enabled", field: "ssh_public_access_enabled", kind: boolFlag, help: "true or false"},
	{flag: "enable-node-public-ip", field: "enable_node_public_ip", kind: boolFlag, help: "true or false (kept)"},
	{flag: "vnet-name", field: "network_settings.vnet_name", help: "kept, no effect"},
	{flag: "subnet", field: "network_settings.subnet", help: "kept, no effect"},
	identityTypeField,
	{flag: "user-tenant-id", field: "create_on_behalf_of.user_tenant_id", help: "an instance made for someone else"},
	{flag: "user-object-id", field: "create_on_behalf_of.user_object_id", help: "an instance made for someone else: their user name"},
})

// computeUpdateFields are az ml compute update's flags: what changes on a stored target.
var computeUpdateFields = slices.Concat(clusterScaleFields, []flagField{
	descriptionField,
	identityTypeField,
	{flag: "user-assigned-identities", field: "identity.user_assigned_identities", listItemKey: "resource_id", help: "comma-separated identity ids (kept, no effect)"},
})

// clusterScaleFields are a cluster's bounds: create sets them and update changes them.
var clusterScaleFields = []flagField{
	{flag: "min-instances", field: "min_instances", kind: intFlag, help: "a cluster's fewest nodes"},
	{flag: "max-instances", field: "max_instances", kind: intFlag, help: "a cluster's most nodes"},
	{flag: "idle-time-before-scale-down", field: "idle_time_before_scale_down", kind: intFlag, help: "seconds a cluster's node stays idle before it is released"},
}

var (
	// descriptionField is --description, of any resource that has one.
	descriptionField = flagField{flag: "description", field: "description", help: "description"}
	// identityTypeField is az's --identity-type, kept and unused.
	identityTypeField = flagField{flag: "identity-type", field: "identity.type", help: "kept, no effect"}
)

// addNoWaitFlag adds az's --no-wait to a verb that returns once the workspace accepted the
// change anyway.
func addNoWaitFlag(cmd *cobra.Command, dst *bool) {
	cmd.Flags().BoolVar(dst, "no-wait", false, "return once the workspace accepted it (as az; this verb does not wait otherwise either)")
}
