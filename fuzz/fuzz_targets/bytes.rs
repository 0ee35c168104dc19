//! The fuzz input as a stream of values (`Bytes`): sizes that are mostly small but sometimes
//! negative or huge, floats with NaN, infinities and signed zeros made likely, lengths near the
//! right one. Past the end of the input every read is 0, so any input is a complete program.

/// Reads the fuzz input front to back; past the end everything is 0.
pub struct Bytes<'a>(pub &'a [u8]);
impl Bytes<'_> {
    pub fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { self.u8() as usize % n }
    }
    pub fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }
    /// Mostly small sizes, sometimes negative, sometimes huge (overflow paths).
    pub fn dim(&mut self) -> i64 {
        match self.u8() {
            0..=199 => (self.u8() % 7) as i64,
            200..=219 => -((self.u8() % 3) as i64),
            220..=239 => 1 << (self.u8() % 63),
            240..=249 => i64::MAX - (self.u8() as i64),
            _ => i64::MIN + (self.u8() as i64),
        }
    }
    pub fn dims(&mut self, max_rank: usize) -> Vec<i64> {
        let n = self.below(max_rank + 1);
        (0..n).map(|_| self.dim()).collect()
    }
    /// Any f32 bit pattern, with NaN, ±Inf, ±0 and small values made likely.
    pub fn f32(&mut self) -> f32 {
        match self.u8() {
            0..=159 => (self.u8() as i8) as f32 / 16.0,
            160..=169 => f32::NAN,
            170..=179 => f32::INFINITY,
            180..=189 => f32::NEG_INFINITY,
            190..=199 => -0.0,
            200..=209 => f32::MAX,
            210..=219 => f32::MIN_POSITIVE,
            _ => f32::from_bits(u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])),
        }
    }
    pub fn f64(&mut self) -> f64 {
        match self.u8() {
            0..=149 => self.u8() as f64 / 64.0,
            150..=169 => (self.u8() % 9) as f64,
            170..=179 => f64::NAN,
            180..=189 => f64::INFINITY,
            190..=199 => -1.0,
            _ => f64::from_bits(u64::from_le_bytes(std::array::from_fn(|_| self.u8()))),
        }
    }
    /// A length near `n` (the right one most of the time).
    pub fn len_near(&mut self, n: usize) -> usize {
        match self.u8() {
            0..=219 => n,
            220..=234 => n.saturating_sub(1),
            235..=249 => n + 1,
            _ => self.below(8),
        }
    }
    pub fn f32s(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }
    pub fn u8s(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.u8() % 3).collect()
    }
}
