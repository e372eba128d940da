#!/bin/bash
# Jobs the way Azure ML's CLI example scripts drive them: set az up, submit with --set, wait,
# read values back with --query ... -o tsv, download an output, run a pipeline and list its steps.
# Each "name: value" line is read by internal/e2e/azcompat_test.go.
set -e

# <az_setup>
az login --identity
az account set -s 00000000-0000-0000-0000-000000000000
az configure --defaults group=my-rg workspace=my-ws location=eastus
az extension add -n ml -y
# </az_setup>
echo "setup: done"

# <create_job>
JOB=$(az ml job create -f hello.yml --query name -o tsv --set tags.stage=dev inputs.extra=5 --web)
# </create_job>
echo "job: $JOB"

az ml job stream -n $JOB > /dev/null
STATUS=$(az ml job show -n $JOB --query status -o tsv)
echo "status: $STATUS"
echo "tags: $(az ml job show -n $JOB --query tags.stage -o tsv) $(az ml job show --name $JOB --resource-group my-rg --workspace-name my-ws --query tags.team -o tsv)"

az ml job download --name $JOB --output-name result --download-path ./out
echo "output: $(cat $(find ./out -name greeting.txt))"

# <pipeline>
PIPELINE=$(az ml job create --file pipeline.yml --query name -o tsv)
az ml job stream --name $PIPELINE > /dev/null
echo "pipeline: $PIPELINE $(az ml job show -n $PIPELINE --query status -o tsv)"
for STEP in $(az ml job list --parent-job-name $PIPELINE --query "[].name" -o tsv); do
  echo "step: $STEP $(az ml job show -n $STEP --query status -o tsv)"
done
# </pipeline>

echo "first: $(az ml job list --query "[0].name" -o tsv)"
echo "tracking: $(az ml workspace show --query mlflow_tracking_uri -o tsv)"
if az storage account list > /dev/null 2>&1; then
  echo "other groups: accepted"
else
  echo "other groups: refused"
fi
