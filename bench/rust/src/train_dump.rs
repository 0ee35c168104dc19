//! A training graph dumped by bench/train/train-dump.mjs or train-dump-lm.mjs: `BASE.json` (the
//! graph spec, each initializer's name, dims, kind and place in the binary, and what else the dump
//! records) and `BASE.bin` (the initializers, little-endian f32 or i64), read back for the native
//! training profiles (src/bin/train_profile.rs, src/bin/train_memory.rs).

use sparsekit_wasm::train::{GraphSpec, InitSpec};

/// The graph spec, its initializers and the whole JSON (for the fields a profile reads beside them).
pub fn read(base: &str) -> (GraphSpec, Vec<InitSpec>, serde_json::Value) {
    let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(format!("{base}.json")).unwrap()).unwrap();
    let bin = std::fs::read(format!("{base}.bin")).unwrap();
    let spec: GraphSpec = serde_json::from_value(meta["spec"].clone()).unwrap();
    let inits = meta["inits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let (off, len) = (t["offset"].as_u64().unwrap() as usize, t["len"].as_u64().unwrap() as usize);
            let dims = t["dims"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
            let name = t["name"].as_str().unwrap().to_string();
            if t["float"].as_bool().unwrap() {
                let f = bin[off..off + 4 * len].chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
                InitSpec { name, dims, floats: Some(f), ints: None }
            } else {
                let i = bin[off..off + 8 * len].chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().unwrap())).collect();
                InitSpec { name, dims, floats: None, ints: Some(i) }
            }
        })
        .collect();
    (spec, inits, meta)
}
