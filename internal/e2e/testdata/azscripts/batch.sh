#!/bin/bash
# A batch endpoint the way Azure ML's CLI example scripts make one: a cluster from flags alone,
# the endpoint from --name alone, deployments from a file with --set, the default chosen with
# --set and no file, invoked with --query name -o tsv, its jobs listed, invoked again with
# overrides for one job (--output-path, --set output_file_name, --mini-batch-size,
# --instance-count) and with an invocation file (--f inputs.yml), everything deleted.
# Each "name: value" line is read by internal/e2e/azcompat_test.go.
set -e

ENDPOINT_NAME=az-compat-batch
DEPLOYMENT_NAME=second

# <create_compute>
az ml compute create -n batch-cluster --type amlcompute --min-instances 0 --max-instances 1 --size local-quarter -o none
az ml compute update --name batch-cluster --max-instances 2 --idle-time-before-scale-down 60
# </create_compute>
echo "compute: $(az ml compute show -n batch-cluster --query name -o tsv)"
echo "max_instances: $(az ml compute show -n batch-cluster --query spec.cluster.max_instances -o tsv) $(az ml compute show -n batch-cluster --query spec.cluster.idle_time_before_scale_down -o tsv)"

JOB=$(az ml job create -f train.yml --query name -o tsv)
az ml job stream -n $JOB > /dev/null
az ml model create --name m --version 1 --path azureml://jobs/$JOB/outputs/model --type custom_model -o none

# <create_endpoint>
az ml batch-endpoint create --name $ENDPOINT_NAME
# </create_endpoint>

# <create_deployments>
az ml batch-deployment create --file batch-deployment.yml --endpoint-name $ENDPOINT_NAME --set compute=azureml:batch-cluster
az ml batch-deployment create --file batch-deployment.yml --endpoint-name $ENDPOINT_NAME --name $DEPLOYMENT_NAME --set compute=azureml:batch-cluster settings.mini_batch_size=1
az ml batch-deployment update --name $DEPLOYMENT_NAME --endpoint-name $ENDPOINT_NAME --set settings.mini_batch_size=2
az ml batch-endpoint update --name $ENDPOINT_NAME --set defaults.deployment_name=$DEPLOYMENT_NAME
# </create_deployments>
echo "deployments: $(az ml batch-deployment list --endpoint-name $ENDPOINT_NAME --query "[].name" -o tsv | sort | paste -sd ' ')"
echo "default: $(az ml batch-endpoint show --name $ENDPOINT_NAME --query default_deployment -o tsv)"
echo "mini_batch_size: $(az ml batch-deployment show --name $DEPLOYMENT_NAME --endpoint-name $ENDPOINT_NAME --query settings.mini_batch_size -o tsv)"

# <invoke>
JOB_NAME=$(az ml batch-endpoint invoke --name $ENDPOINT_NAME --input numbers --input-type uri_folder --query name -o tsv)
az ml job stream -n $JOB_NAME > /dev/null
# </invoke>
echo "batch job: $JOB_NAME $(az ml job show -n $JOB_NAME --query status -o tsv)"
echo "list-jobs: $(az ml batch-deployment list-jobs --name $DEPLOYMENT_NAME --endpoint-name $ENDPOINT_NAME --query "[].name" -o tsv)"
echo "first's jobs: $(az ml batch-deployment list-jobs --name first --endpoint-name $ENDPOINT_NAME --query "[].name" -o tsv)"

az ml job download --name $JOB_NAME --output-name score --download-path ./results
echo "rows: $(sort $(find ./results -name predictions.csv) | tr '\n' ' ')"

# <invoke_overrides>
JOB_NAME=$(az ml batch-endpoint invoke --name $ENDPOINT_NAME --input numbers --input-type uri_folder --output-path azureml://datastores/workspaceblobstore/paths/$ENDPOINT_NAME --set output_file_name=named.csv --query name -o tsv)
az ml job stream -n $JOB_NAME > /dev/null
az ml job download --name $JOB_NAME --output-name score --download-path ./named
echo "named: $(find ./named -type f -exec basename {} \; | sort | paste -sd ' ')"
READER=$(az ml job create -f read-predictions.yml --query name -o tsv)
echo "from datastore: $(az ml job stream -n $READER | grep -o 'n[0-9].txt,[0-9]*' | sort | paste -sd ' ')"

JOB_NAME=$(az ml batch-endpoint invoke --name $ENDPOINT_NAME --input numbers --input-type uri_folder --mini-batch-size 1 --instance-count 2 --query name -o tsv)
echo "split: $(az ml job stream -n $JOB_NAME | grep -o 'node [0-9] of [0-9]: [0-9]* files in [0-9]* mini-batches' | sort | paste -sd ';')"
echo "overridden job: $JOB_NAME"
echo "stored after: $(az ml batch-deployment show --name $DEPLOYMENT_NAME --endpoint-name $ENDPOINT_NAME --query settings.mini_batch_size -o tsv) $(az ml batch-deployment show --name $DEPLOYMENT_NAME --endpoint-name $ENDPOINT_NAME --query settings.output_file_name -o tsv)"
# </invoke_overrides>

# <invoke_file>
JOB_NAME=$(az ml batch-endpoint invoke -n $ENDPOINT_NAME -d $DEPLOYMENT_NAME --f inputs.yml --query name -o tsv)
az ml job stream -n $JOB_NAME > /dev/null
az ml job download --name $JOB_NAME --output-name score --download-path ./from-file
echo "from file: $(az ml job show -n $JOB_NAME --query status -o tsv) $(sort $(find ./from-file -name predictions.csv) | paste -sd ' ')"
# </invoke_file>

# <delete>
az ml batch-endpoint delete --name $ENDPOINT_NAME --yes --no-wait
az ml compute delete --name batch-cluster --yes --no-wait
# </delete>
echo "deleted: $ENDPOINT_NAME"
