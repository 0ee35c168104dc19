// What a cancelled calibration throws: an AbortError (as fetch does) with code 'cancelled', so that
// callers tell it from a failure without importing this class.
export class CancelledError extends Error {
  readonly code = 'cancelled';
  constructor() {
    super('Calibration cancelled');
    this.name = 'AbortError';
  }
}
