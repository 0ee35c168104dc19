// The page's four workers, each behind a WorkerClient of its typed API (protocol.ts). The
// `new Worker(new URL(…), {type: 'module'})` form is what Vite recognises to bundle a worker.
import { WorkerClient } from './protocol.js';
import type { CalibApi, ChannelsApi, EvalApi, JobApi } from './workers/api.js';

export const evalClient = new WorkerClient<EvalApi>(() => new Worker(new URL('./workers/eval-worker.ts', import.meta.url), { type: 'module' }));
export const calibClient = new WorkerClient<CalibApi>(() => new Worker(new URL('./workers/calib-worker.ts', import.meta.url), { type: 'module' }));
export const channelsClient = new WorkerClient<ChannelsApi>(() => new Worker(new URL('./workers/channels-worker.ts', import.meta.url), { type: 'module' }));
export const jobClient = new WorkerClient<JobApi>(() => new Worker(new URL('./workers/job-worker.ts', import.meta.url), { type: 'module' }));
