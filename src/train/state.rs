//! A trainer's state as bytes, for checkpoints and resume: the step count, then per trained
//! parameter its name, shape, values, Adam moments `m` and `v` and keep-mask. Little-endian:
//!
//! ```text
//! "SKTRAIN1" | u32 step | u32 count | count × ( u32 name_len | name (UTF-8) | u32 rank |
//!   u32 dims[rank] | u8 masked | f32 w[n] | f32 m[n] | f32 v[n] | (masked) u8 keep[n] )
//! ```
//!
//! A parameter held on a quantization grid ([`super::grid`]) stores its float master as `w`; the
//! trainer it is loaded into holds the grid again (set before loading) and rounds it.
//!
//! Size: `16 + Σ (9 + name + 4·rank + 12 n + (masked ? n : 0))` bytes — three floats (and a mask
//! byte) per weight. Loading checks the whole buffer against the trainer (same names, same
//! shapes) before it writes anything. Adam's options are not in the state: they are the
//! trainer's (a schedule may change the learning rate on resume).

use super::tensor::numel;
use super::trainer::Trainer;
use crate::core::error::{Error, ErrorKind, Result};

const MAGIC: &[u8; 8] = b"SKTRAIN1";

fn bad(msg: String) -> Error {
    Error::new(ErrorKind::InvalidArguments, format!("trainer state: {msg}"))
}

impl Trainer {
    /// Bytes [`Trainer::save_state`] returns, computed without building them.
    pub fn state_bytes(&self) -> usize {
        let mut n = 16;
        for (i, p) in self.graph.params.iter().enumerate() {
            let w = self.graph.param(i);
            n += 9 + p.name.len() + 4 * w.rank() + 12 * w.len() + self.states[i].keep.as_ref().map_or(0, |k| k.len());
        }
        n
    }

    pub fn save_state(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(self.state_bytes());
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&self.t.to_le_bytes());
        b.extend_from_slice(&(self.graph.params.len() as u32).to_le_bytes());
        for (i, p) in self.graph.params.iter().enumerate() {
            let w = self.graph.param(i);
            let s = &self.states[i];
            b.extend_from_slice(&(p.name.len() as u32).to_le_bytes());
            b.extend_from_slice(p.name.as_bytes());
            b.extend_from_slice(&(w.rank() as u32).to_le_bytes());
            w.shape.iter().for_each(|&d| b.extend_from_slice(&(d as u32).to_le_bytes()));
            b.push(s.keep.is_some() as u8);
            // On a held grid the trained values are the master's (the parameter is their rounding).
            let values = s.grid.as_ref().map_or(&w.data, |h| &h.master);
            for a in [values, &s.m, &s.v] {
                a.iter().for_each(|x| b.extend_from_slice(&x.to_le_bytes()));
            }
            if let Some(k) = &s.keep {
                b.extend_from_slice(k);
            }
        }
        b
    }

    /// Restores a state saved by a trainer of the same graph (parameters matched by name).
    pub fn load_state(&mut self, bytes: &[u8]) -> Result<()> {
        let mut r = Reader { b: bytes, at: 0 };
        if r.take(8)? != MAGIC {
            return Err(bad("not a trainer state (bad magic)".into()));
        }
        let step = r.u32()?;
        let count = r.u32()? as usize;
        if count != self.graph.params.len() {
            return Err(bad(format!("{count} parameters, this trainer has {}", self.graph.params.len())));
        }
        // First pass: parse and check everything, remembering where each part starts.
        let mut parts = Vec::with_capacity(count);
        for _ in 0..count {
            let len = r.u32()? as usize;
            let name = std::str::from_utf8(r.take(len)?).map_err(|_| bad("a name is not UTF-8".into()))?.to_string();
            let i = self.param_index(&name).map_err(|_| bad(format!("parameter {name} is not in this trainer")))?;
            let rank = r.u32()? as usize;
            if rank > 16 {
                return Err(bad(format!("parameter {name}: rank {rank}")));
            }
            let dims = (0..rank).map(|_| r.u32().map(|d| d as usize)).collect::<Result<Vec<_>>>()?;
            let w = self.graph.param(i);
            if dims != w.shape {
                return Err(Error::shape_mismatch(&format!("trainer state: parameter {name}"), &w.shape, &dims));
            }
            let n = numel(&dims)?;
            let masked = match r.take(1)?[0] {
                0 => false,
                1 => true,
                m => return Err(bad(format!("parameter {name}: mask flag {m}"))),
            };
            let at = r.at;
            r.take(12 * n)?;
            let keep_at = r.at;
            if masked {
                r.take(n)?;
            }
            parts.push((i, n, at, masked.then_some(keep_at)));
        }
        if r.at != bytes.len() {
            return Err(bad(format!("{} trailing bytes", bytes.len() - r.at)));
        }
        let f = |at: usize, n: usize| -> Vec<f32> {
            bytes[at..at + 4 * n].chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
        };
        for (i, n, at, keep_at) in parts {
            let values = f(at, n);
            let s = &mut self.states[i];
            match &mut s.grid {
                Some(h) => {
                    h.master = values;
                    h.project(&mut self.graph.param_mut(i).data);
                }
                None => self.graph.param_mut(i).data = values,
            }
            s.m = f(at + 4 * n, n);
            s.v = f(at + 8 * n, n);
            s.keep = keep_at.map(|k| bytes[k..k + n].to_vec());
        }
        self.t = step;
        Ok(())
    }
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len()).ok_or_else(|| bad(format!("truncated at byte {}", self.at)))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32> {
        let s = self.take(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
}
