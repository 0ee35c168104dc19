// The job: one typed value for a whole pruning run, its defaults, its checks and its runner.
export type { PruneJob, JobMode, JobMethod, JobTraining, JobEnv, JobProgress } from './types.js';
export { JOB_DEFAULTS } from './defaults.js';
export { checkJob } from './check.js';
export { parseNm, checkNm } from '../nm-pattern.js';
export { JobError } from '../errors.js';
export { FloorError } from './floor-error.js';
export { runJob } from './run.js';
export type { JobResult, JobReport, JobPruneReport, JobFidelity } from './run.js';
export { recover } from './recover-model.js';
export type { ModelRecoverReport } from './recover-model.js';
