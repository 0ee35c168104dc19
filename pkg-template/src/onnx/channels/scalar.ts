// Scalar functions of elementwise ops: what a removed channel's constant becomes through them (its
// filter gone, a channel outputs a constant: its bias through BN, the activation, ...).
import { attr, type NodeProto } from '../model.js';

/** Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7): enough for a folded constant. */
export function erf(x: number): number {
  const t = 1 / (1 + 0.3275911 * Math.abs(x));
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return x < 0 ? -y : y;
}

/** A string attribute (bytes in the proto). */
export function attrString(n: NodeProto, name: string): string {
  const s = attr(n, name)?.s;
  return s === undefined ? '' : typeof s === 'string' ? s : new TextDecoder().decode(s);
}

const roundHalfEven = (v: number) => {
  const r = Math.round(v);
  return Math.abs(v % 1) === 0.5 && r % 2 ? r - 1 : r;
};

/** The scalar function of a unary elementwise op (`clip`: Clip's bounds), or undefined. */
export function unaryFunction(n: NodeProto, clip: [number, number]): ((v: number) => number) | undefined {
  const f = (name: string, dflt: number) => { const a = attr(n, name); return a ? a.f : dflt; };
  switch (n.op_type) {
    case 'Relu': return (v) => Math.max(0, v);
    case 'LeakyRelu': { const alpha = f('alpha', 0.01); return (v) => (v < 0 ? alpha * v : v); }
    case 'Sigmoid': return (v) => 1 / (1 + Math.exp(-v));
    case 'HardSigmoid': { const alpha = f('alpha', 0.2), beta = f('beta', 0.5); return (v) => Math.min(1, Math.max(0, alpha * v + beta)); }
    case 'HardSwish': return (v) => v * Math.min(1, Math.max(0, v / 6 + 0.5));
    case 'Tanh': return Math.tanh;
    case 'Clip': return (v) => Math.min(clip[1], Math.max(clip[0], v));
    case 'Elu': { const alpha = f('alpha', 1); return (v) => (v < 0 ? alpha * (Math.exp(v) - 1) : v); }
    case 'Selu': {
      const alpha = f('alpha', 1.67326319217681884765625), gamma = f('gamma', 1.05070102214813232421875);
      return (v) => gamma * (v < 0 ? alpha * (Math.exp(v) - 1) : v);
    }
    case 'Softplus': return (v) => Math.log1p(Math.exp(v));
    case 'Softsign': return (v) => v / (1 + Math.abs(v));
    case 'Exp': return Math.exp;
    case 'Log': return Math.log;
    case 'Abs': return Math.abs;
    case 'Neg': return (v) => -v;
    case 'Sqrt': return Math.sqrt;
    case 'Erf': return erf;
    case 'Gelu': {
      if (attrString(n, 'approximate') === 'tanh') return (v) => 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3)));
      return (v) => 0.5 * v * (1 + erf(v / Math.SQRT2));
    }
    case 'Mish': return (v) => v * Math.tanh(Math.log1p(Math.exp(v)));
    case 'Identity': case 'Dropout': case 'Cast': case 'CastLike': return (v) => v;
    case 'Sign': return Math.sign;
    case 'Not': return (v) => (v === 0 ? 1 : 0);
    case 'IsNaN': return (v) => (Number.isNaN(v) ? 1 : 0);
    case 'IsInf': {
      // int attributes (default 1): which infinities count
      const on = (name: string) => { const a = attr(n, name); return a ? Number(a.i) !== 0 : true; };
      const neg = on('detect_negative'), pos = on('detect_positive');
      return (v) => ((v === Infinity && pos) || (v === -Infinity && neg) ? 1 : 0);
    }
    case 'Floor': return Math.floor;
    case 'Ceil': return Math.ceil;
    case 'Round': return roundHalfEven;
    case 'Reciprocal': return (v) => 1 / v;
    case 'Sin': return Math.sin;
    case 'Cos': return Math.cos;
    case 'ThresholdedRelu': { const alpha = f('alpha', 1); return (v) => (v > alpha ? v : 0); }
    case 'Celu': { const alpha = f('alpha', 1); return (v) => Math.max(0, v) + Math.min(0, alpha * (Math.exp(v / alpha) - 1)); }
    case 'Swish': { const alpha = f('alpha', 1); return (v) => v / (1 + Math.exp(-alpha * v)); }
    default: return undefined;
  }
}

/** The scalar function of a binary elementwise op, or undefined. */
export function binaryFunction(op: string): ((a: number, b: number) => number) | undefined {
  switch (op) {
    case 'Add': case 'Sum': return (a, b) => a + b;
    case 'Sub': return (a, b) => a - b;
    case 'Mul': return (a, b) => a * b;
    case 'Div': return (a, b) => a / b;
    case 'Max': return Math.max;
    case 'Min': return Math.min;
    case 'Pow': return Math.pow;
    case 'PRelu': return (a, b) => (a < 0 ? a * b : a);
    default: return undefined;
  }
}
