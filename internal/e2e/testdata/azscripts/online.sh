#!/bin/bash
# An online endpoint the way Azure ML's CLI example scripts make one: the endpoint from flags
# alone, a deployment from its file with --set, scaled with --set and no file, called with the
# key read by --query primaryKey -o tsv, its traffic and tags changed, deleted without waiting.
# Each "name: value" line is read by internal/e2e/azcompat_test.go.
set -e

ENDPOINT_NAME=az-compat-endpoint

az configure --defaults group=my-rg workspace=my-ws

# <register_model>
JOB=$(az ml job create -f train.yml --query name -o tsv)
az ml job stream -n $JOB > /dev/null
az ml model create --name m --version 1 --path azureml://jobs/$JOB/outputs/model --type custom_model -o none
# </register_model>

# <create_endpoint>
az ml online-endpoint create -n $ENDPOINT_NAME --auth-mode key
# </create_endpoint>
echo "endpoint: $(az ml online-endpoint show --name $ENDPOINT_NAME --query "provisioning_state" -o tsv)"

# <create_deployment>
az ml online-deployment create -f blue.yml --endpoint $ENDPOINT_NAME --all-traffic --set endpoint_name=$ENDPOINT_NAME instance_count=1
# </create_deployment>
echo "deployment: $(az ml online-deployment show --name blue --endpoint $ENDPOINT_NAME --query "provisioning_state" -o tsv)"

# <scale_deployment>
az ml online-deployment update --name blue --endpoint $ENDPOINT_NAME --set instance_count=2
# </scale_deployment>
echo "instances: $(az ml online-deployment show -n blue -e $ENDPOINT_NAME --query instance_count -o tsv)"

# <get_key_and_uri>
KEY=$(az ml online-endpoint get-credentials -n $ENDPOINT_NAME -o tsv --query primaryKey)
SCORING_URI=$(az ml online-endpoint show -n $ENDPOINT_NAME -o tsv --query scoring_uri)
# </get_key_and_uri>
echo "key: $KEY"
echo "scoring_uri: $SCORING_URI"
echo "invoke: $(az ml online-endpoint invoke --name $ENDPOINT_NAME --request-file request.json)"
echo "with key: $(python3 post.py "$SCORING_URI" "$KEY" request.json)"
echo "logs: $(az ml online-deployment get-logs --name blue --endpoint $ENDPOINT_NAME --lines 200 | grep -c . || true)"

# <update_endpoint>
az ml online-endpoint update --name $ENDPOINT_NAME --traffic "blue=100" --set tags.stage=prod
# </update_endpoint>
echo "stage: $(az ml online-endpoint show -n $ENDPOINT_NAME --query tags.stage -o tsv)"
echo "traffic: $(az ml online-endpoint show -n $ENDPOINT_NAME --query traffic.blue -o tsv)"

# <delete_endpoint>
az ml online-endpoint delete --name $ENDPOINT_NAME --yes --no-wait
# </delete_endpoint>
echo "deleted: $ENDPOINT_NAME"
