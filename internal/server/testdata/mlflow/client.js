// Drives Hangar's MLflow API with the npm package mlflow@2.0.7 (a Node.js MLflow REST client,
// github.com/Yuhsak/mlflow), as its README shows. Used by TestMLflowNodeClient.
// Environment: MLFLOW_JS_DIR (where scripts/setup/mlflow-js.sh installed it), HANGAR_URL,
// HANGAR_TOKEN (the workspace's), JOB_ID and JOB_TOKEN (a job's run and its run token), OUT
// (where the answers are written as JSON).
const fs = require('fs')
const path = require('path')
const MLflow = require(path.join(process.env.MLFLOW_JS_DIR, 'node_modules', 'mlflow'))
const { ViewType, RunStatus } = require(path.join(process.env.MLFLOW_JS_DIR, 'node_modules', 'mlflow', 'enum'))

// The library prints every POST body; keep stdout for errors only.
console.log = () => {}

const endpoint = process.env.HANGAR_URL
const ws = new MLflow({ endpoint, headers: { Authorization: 'Bearer ' + process.env.HANGAR_TOKEN } })
const asJob = new MLflow({ endpoint, headers: { Authorization: 'Bearer ' + process.env.JOB_TOKEN } })

;(async () => {
  const out = {}
  const { experiment_id } = await ws.Experiments.create({ name: 'node-client' })
  out.experiments = (await ws.Experiments.list({ view_type: ViewType.ACTIVE_ONLY })).experiments.map(e => e.name)
  const { run } = await ws.Runs.create({
    experiment_id, start_time: 1700000000000,
    tags: [{ key: 'mlflow.runName', value: 'node-run' }, { key: 'mlflow.user', value: 'node' }],
  })
  const run_id = run.info.run_id
  out.run_id = run_id
  for (let step = 0; step < 5; step++) {
    await ws.Runs.logMetric({ run_id, key: 'loss', value: 1 / (step + 1), timestamp: 1700000001000 + step, step })
  }
  await ws.Runs.logParameter({ run_id, key: 'lr', value: '0.01' })
  await ws.Runs.setTag({ run_id, key: 'team', value: 'vision' })
  await ws.Runs.logBatch({
    run_id,
    metrics: [{ key: 'acc', value: 0.75, timestamp: 1700000002000, step: 4 }],
    params: [{ key: 'epochs', value: '5' }, { key: 'batch', value: '32' }],
    tags: [{ key: 'mlflow.note.content', value: 'from node' }],
  })
  out.history = (await ws.Metrics.getHistory({ run_id, metric_key: 'loss' })).metrics
  out.search = (await ws.Runs.search({
    experiment_ids: [experiment_id], filter: "metrics.loss < 0.5 AND params.lr = '0.01'",
    run_view_type: ViewType.ACTIVE_ONLY, order_by: ['metrics.acc DESC'],
  })).runs.map(r => r.info.run_id)
  await ws.Runs.update({ run_id, status: RunStatus.FINISHED, end_time: 1700000009000 })
  out.run = (await ws.Runs.get({ run_id })).run

  // A job's script, with its run token: logs to its own run, and may not touch another.
  await asJob.Runs.logMetric({ run_id: process.env.JOB_ID, key: 'val_loss', value: 0.25, timestamp: 1700000003000, step: 7 })
  await asJob.Runs.logParameter({ run_id: process.env.JOB_ID, key: 'seed', value: '42' })
  try {
    await asJob.Runs.logMetric({ run_id, key: 'loss', value: 9, timestamp: 1700000004000, step: 9 })
    out.other = 'allowed'
  } catch (e) {
    out.other = String(e.message)
  }
  fs.writeFileSync(process.env.OUT, JSON.stringify(out))
})().catch(e => { console.error(e); process.exit(1) })
