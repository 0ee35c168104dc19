//! Byte widths of the stored values and indices, and the `u32` index conversion every encoder
//! uses (an index that does not fit is refused, not wrapped).

use crate::bail;
use crate::core::error::Result;

pub(crate) const F32: usize = 4;
pub(crate) const U32: usize = 4;

pub(crate) fn to_u32(what: &str, x: usize) -> Result<u32> {
    match u32::try_from(x) {
        Ok(v) => Ok(v),
        Err(_) => bail!(InvalidArguments, "{what} = {x} does not fit the u32 indices of the format"),
    }
}
