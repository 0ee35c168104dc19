//! The training-engine spike (docs/training-engine.md): the same small CNN trained one step by
//! (a) our own engine on the project's kernels and (b) candle-core, checked against f64 finite
//! differences and timed natively (src/main.rs) and in wasm (run-wasm.mjs over the exports
//! below).

pub mod net;
#[cfg(feature = "ours")]
pub mod ours_net;
pub mod reference;
#[cfg(feature = "candle")]
pub mod candle_net;

use net::NetSpec;

/// The measured network: a det-like block, batch 4, 64 x 64.
pub fn bench_spec() -> NetSpec {
    NetSpec::det_block(4, 64)
}

#[cfg(feature = "ours")]
static mut OURS: Option<ours_net::OursNet> = None;
#[cfg(feature = "candle")]
static mut CANDLE: Option<candle_net::CandleNet> = None;

/// Builds the engines on the bench network (wasm entry point).
#[no_mangle]
pub extern "C" fn setup() {
    let spec = bench_spec();
    let (_x, _ws, _bs) = spec.init(7);
    // SAFETY: single-threaded wasm harness; nothing else touches these statics.
    unsafe {
        #[cfg(feature = "ours")]
        {
            OURS = Some(ours_net::OursNet::new(&spec, &_x, &_ws, &_bs));
        }
        #[cfg(feature = "candle")]
        {
            CANDLE = Some(candle_net::CandleNet::new(&spec, &_x, &_ws, &_bs));
        }
    }
}

/// One training step (forward + backward) of our engine; returns the loss.
#[cfg(feature = "ours")]
#[no_mangle]
pub extern "C" fn step_ours() -> f32 {
    // SAFETY: see setup.
    unsafe { (*std::ptr::addr_of_mut!(OURS)).as_mut().map_or(f32::NAN, |n| n.step().0) }
}

/// One training step of candle; returns the loss.
#[cfg(feature = "candle")]
#[no_mangle]
pub extern "C" fn step_candle() -> f32 {
    // SAFETY: see setup.
    unsafe { (*std::ptr::addr_of!(CANDLE)).as_ref().map_or(f32::NAN, |n| n.step().0) }
}

/// FLOPs of one step of the bench network.
#[no_mangle]
pub extern "C" fn step_flops() -> f64 {
    bench_spec().step_flops()
}
