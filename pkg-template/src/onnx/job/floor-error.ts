// The job's run-time refusal that is not about an option: a search whose floor no plan met, or
// cannot meet on the samples it was given. It carries the plans tried, for the caller to show.
import { OnnxError } from '../errors.js';
import type { CompressResult, PlanStep } from '../search/compress.js';

export class FloorError extends OnnxError {
  /** The plans the search verified (empty when the floor was refused before any ran). */
  readonly steps: PlanStep[];
  /** What the search measured (its sensitivity table, runs, times), when it ran. */
  readonly search?: Omit<CompressResult, 'model' | 'report'>;
  constructor(message: string, search?: Omit<CompressResult, 'model' | 'report'>) {
    super('unsupported', message, 'invalid_arguments');
    this.name = 'FloorError';
    this.steps = search?.steps ?? [];
    this.search = search;
  }
}
