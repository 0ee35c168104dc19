// A weight held on a quantization grid while it trains: what quant/held-codes.ts makes from the codes
// a job will write and recover/distill.ts hands the training core (Trainer.holdGrid, src/train/grid.rs).
// Here, below both, because the quantizer and the recovery layer do not import each other.

/** A weight's grid in its own (tensor) layout, one entry per element. */
export interface HeldGrid {
  /** One scale per element (negative is a grid too: onnxruntime's 4-bit grid puts a positive extreme on code -8). */
  scale: Float32Array;
  /** Codes in [lo, hi]. */
  lo: number;
  hi: number;
}
