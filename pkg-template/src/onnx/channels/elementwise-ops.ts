// The element-wise ops, listed once: shape inference (infer-shapes.ts) carries a shape through them
// and the channel rules (rules/elementwise.ts) carry channels through them, from the same lists, so
// the two cannot disagree on an op.

/** One input, the output element i a function of input element i (extra inputs: attributes as tensors). */
export const ELEMENTWISE_UNARY = ['Relu', 'LeakyRelu', 'Sigmoid', 'HardSigmoid', 'HardSwish', 'Tanh', 'Clip', 'Elu', 'Selu',
  'Softplus', 'Softsign', 'Exp', 'Log', 'Abs', 'Neg', 'Sqrt', 'Erf', 'Gelu', 'Mish', 'Identity', 'Dropout', 'Cast', 'CastLike',
  'Floor', 'Ceil', 'Round', 'Reciprocal', 'Sin', 'Cos', 'ThresholdedRelu', 'Celu', 'Swish', 'Not', 'IsNaN', 'IsInf', 'Sign'] as const;

/** Arithmetic on broadcast operands: the channel rules tie the channels of the operands that carry them. */
export const ELEMENTWISE_BINARY = ['Add', 'Sub', 'Mul', 'Div', 'Max', 'Min', 'Pow', 'PRelu', 'Sum'] as const;

/**
 * Broadcasting ops whose output shape inference follows but whose channels the rules do not (they
 * compare or combine bits: a channel tied through them would carry a mask, not a feature); except
 * Where, which selects between features element by element (rules/elementwise.ts follows it).
 */
export const BROADCAST_ONLY = ['Mean', 'Mod', 'Equal', 'Less', 'Greater', 'LessOrEqual', 'GreaterOrEqual', 'And', 'Or', 'Xor',
  'Where', 'BitShift'] as const;

/** Not element-wise but shape-preserving (they normalize over axes); their channels: rules/norm.ts. */
export const SHAPE_PRESERVING = ['Softmax', 'LogSoftmax', 'LayerNormalization', 'BatchNormalization', 'InstanceNormalization',
  'SimplifiedLayerNormalization', 'RMSNormalization'] as const;
