// The channel-removal compensations the benches compare side by side, by name: the defaults
// (`centred`: SparseGPT on each consumer's centred statistics, its refit on) and the settings that
// take one part away (the options of removeChannelsCalibrated / the job's `calibration`).
export const COMPENSATIONS = {
  centred: {},
  uncentred: { centre: false, refit: 0 }, // the compensation before centring
  'centred-norefit': { refit: 0 },
  'uncentred-refit': { centre: false }, // the combination centring replaces
};

/** The options of a compensation by name; an unknown name stops the bench with the known ones. */
export function compensation(name, flag = '--variants') {
  const options = COMPENSATIONS[name];
  if (!options) throw new Error(`${flag}: unknown ${name} (${Object.keys(COMPENSATIONS).join(', ')})`);
  return options;
}
