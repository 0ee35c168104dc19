// Recovery of a pruned model towards its original: closed-form steps, then distillation (recover.ts).
export { recover } from './recover.js';
export type { RecoverOptions, RecoverProgress, RecoverReport, RecoverState, RecoverPhase, StepReport, Feature } from './types.js';
export { fitLayers, independentRuns } from './layers.js';
export type { FitLayer } from './layers.js';
export { ChannelStats, matchChannels } from './channel-stats.js';
export { trainSetup, teacherTargets, lossesOf } from './train-setup.js';
export type { TrainSetup } from './train-setup.js';
export { proxPrune, rampTarget, blockScores, thresholdBelow } from './prox.js';
export { cutPoints, matchFeatures, withFeatures } from './features.js';
export { maskPadding } from './token-mask.js';
export { paddingTrim, trimProbe, batchLength, trimBatch, trimSamples, trimmedLosses } from './trim-padding.js';
export type { PaddingTrim } from './trim-padding.js';
export { epochBatches, makeBatch } from './batches.js';
export { lrSchedule, lrAt, runShare } from './lr-schedule.js';
export type { LrSchedule } from './lr-schedule.js';
export { FeatureTeacher } from './feature-teacher.js';
export type { TeacherBatching, FeatureTeacherOptions } from './feature-teacher.js';
export type { ProxPruneOptions, ProxProgress, ProxReport, ProxLayerReport } from './prox.js';
